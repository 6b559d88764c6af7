import { randomBytes } from 'node:crypto';
import { audit } from './areas/audit';
import { billing } from './areas/billing';
import { data } from './areas/data';
import { events } from './areas/events';
import { files } from './areas/files';
import { health } from './areas/health';
import { identity } from './areas/identity';
import { integrations } from './areas/integrations';
import { jobs } from './areas/jobs';
import { modules } from './areas/modules';
import { money } from './areas/money';
import { rbac } from './areas/rbac';
import { EventService } from './grpc';
import { Http } from './http';
import { Mailpit } from './mailpit';
import type { State } from './state';
import { AREAS, Tour, type StepResult } from './steps';

// The areas in the order AREAS names them, each handed what the earlier ones learnt, then the summary.

export interface TourOptions {
  /** The gateway or balancer, without /v1: http://127.0.0.1:8080. */
  url: string;
  /** host:port of the gRPC EventService. */
  grpc: string;
  /** Mailpit's HTTP API (without /api/v1). */
  mailpit: string;
  /** Where the lines go (default stdout). */
  write?: (line: string) => void;
}

export interface TourReport {
  steps: StepResult[];
  passed: number;
  failed: number;
  skipped: number;
  ms: number;
}

/** Walks every area against `options.url`; never throws for what the platform answers. */
export async function runTour(options: TourOptions): Promise<TourReport> {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const started = performance.now();
  const http = new Http(options.url.replace(/\/+$/, ''));
  const mail = new Mailpit(options.mailpit.replace(/\/+$/, ''));
  const grpc = new EventService(options.grpc);
  const tour = new Tour(write);
  const state: State = { runId: `${Date.now().toString(36)}${randomBytes(2).toString('hex')}` };
  write(`tour ${state.runId} of ${options.url} (gRPC ${options.grpc}, Mailpit ${options.mailpit})`);
  try {
    await identity(tour, http, mail, state);
    await rbac(tour, http, mail, state);
    await billing(tour, http, state);
    const crmInstalled = await modules(tour, http, state);
    await data(tour, http, state, crmInstalled);
    await files(tour, http, state);
    await money(tour, http, state);
    await events(tour, http, grpc, state, crmInstalled);
    await integrations(tour, http, state, crmInstalled);
    await audit(tour, http, state);
    await jobs(tour, http, state);
    await health(tour, http, state);
  } finally {
    grpc.close();
  }
  const steps = tour.results;
  const count = (outcome: StepResult['outcome']) => steps.filter((result) => result.outcome === outcome).length;
  const report: TourReport = { steps, passed: count('passed'), failed: count('failed'), skipped: count('skipped'), ms: Math.round(performance.now() - started) };
  const perArea = AREAS.map((area) => {
    const own = steps.filter((result) => result.area === area);
    if (own.some((result) => result.outcome === 'skipped')) return `${area} skipped`;
    return `${area} ${own.filter((result) => result.outcome === 'passed').length}/${own.length}`;
  });
  write(`${report.failed || report.skipped ? '✗' : '✓'} tour: ${report.passed} passed, ${report.failed} failed, ${report.skipped} area(s) skipped in ${(report.ms / 1000).toFixed(1)} s against ${options.url}`);
  write(`  ${perArea.join(' · ')}`);
  return report;
}
