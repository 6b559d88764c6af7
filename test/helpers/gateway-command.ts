import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../common/paths';

/** The glibc tunables scripts/infra/app-up.sh gives the gateway (`GATEWAY_MALLOC='…'`). */
export function gatewayMallocTunables(): string {
  const script = readFileSync(join(repoRoot, 'scripts/infra/app-up.sh'), 'utf8');
  const tunables = /^GATEWAY_MALLOC='([^']+)'$/m.exec(script)?.[1];
  if (!tunables) throw new Error('scripts/infra/app-up.sh sets no GATEWAY_MALLOC');
  return tunables;
}

/** The gateway's command in scripts/infra/app-up.sh (`GATEWAY=(…)`), its words as the shell passes them. */
export function nativeGatewayCommand(): string[] {
  const script = readFileSync(join(repoRoot, 'scripts/infra/app-up.sh'), 'utf8');
  const words = /^GATEWAY=\((.+)\)$/m.exec(script)?.[1];
  if (!words) throw new Error('scripts/infra/app-up.sh sets no GATEWAY');
  return words.replace('$GATEWAY_MALLOC', gatewayMallocTunables()).split(' ').map((word) => word.replace(/^"|"$/g, ''));
}

/** The image's CMD (the Dockerfile's last, in JSON form). */
export function imageCommand(dockerfile: string): string[] {
  const cmd = [...dockerfile.matchAll(/^CMD (\[.+\])$/gm)].at(-1)?.[1];
  if (!cmd) throw new Error('the Dockerfile has no CMD in JSON form');
  return JSON.parse(cmd) as string[];
}
