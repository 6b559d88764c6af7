/**
 * The few members of clamscan 2.4 (a CommonJS package without type declarations) that
 * services/files/scanner.ts uses: a clamd connection over TCP, its INSTREAM scan and VERSION.
 */
declare module 'clamscan' {
  import type { Readable } from 'node:stream';

  namespace NodeClam {
    interface Options {
      removeInfected?: boolean;
      quarantineInfected?: boolean;
      scanLog?: string | null;
      debugMode?: boolean;
      clamscan?: { active?: boolean };
      clamdscan?: {
        host?: string;
        port?: number;
        /** Socket idle timeout in milliseconds. */
        timeout?: number;
        localFallback?: boolean;
        active?: boolean;
        /** Skips the PING at init: whether clamd answers is the scan's concern, retried there. */
        bypassTest?: boolean;
      };
      preference?: 'clamdscan' | 'clamscan';
    }

    interface ScanResult {
      /** null when clamd's reply is neither OK nor FOUND (an empty stream, a read timeout). */
      isInfected: boolean | null;
      viruses: string[];
      resultString: string;
      timeout: boolean;
    }
  }

  class NodeClam {
    init(options: NodeClam.Options): Promise<NodeClam>;
    scanStream(stream: Readable): Promise<NodeClam.ScanResult>;
    /** clamd's answer to VERSION (`ClamAV 1.4.6/27500/<date>`), newline included. */
    getVersion(): Promise<string>;
  }

  export = NodeClam;
}
