import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../../common/paths';
import { call } from '../../helpers/http';

/**
 * api/server.ts as a process of its own, run from source through swc (no build needed): start-up
 * validation of the configuration and the graceful shutdown.
 */
function startServer(env: Record<string, string>): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, ['-r', join(repoRoot, 'test/helpers/app-swc-register.cjs'), join(repoRoot, 'api/server.ts')], {
    cwd: repoRoot,
    env: { ...process.env, NODE_OPTIONS: '', NODE_ENV: 'test', LOG_LEVEL: 'info', ...env },
  });
}

function collect(child: ChildProcessWithoutNullStreams) {
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => { output.stdout += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output.stderr += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { output, exited };
}

/** Resolves with the port from the "gateway listening" log line. */
function listeningPort(child: ChildProcessWithoutNullStreams): Promise<number> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        if (line.includes('"gateway listening"')) resolve(JSON.parse(line).port as number);
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code} before listening`)));
  });
}

describe('gateway process', () => {
  it('stops with exit code 1 and names the variable when the configuration is invalid', async () => {
    const child = startServer({ API_PORT: '99999' });
    const { output, exited } = collect(child);
    expect(await exited).toBe(1);
    expect(output.stderr).toContain('Invalid configuration');
    expect(output.stderr).toContain('API_PORT');
  }, 20_000);

  it('serves, then drains and exits 0 on SIGTERM', async () => {
    // Ephemeral ports for both servers: the platform's own gateway holds 8080 and 50051.
    const child = startServer({ API_PORT: '0', GRPC_PORT: '0' });
    const { output, exited } = collect(child);
    try {
      const port = await listeningPort(child);
      expect(await call(`http://127.0.0.1:${port}/live`)).toMatchObject({ status: 200, body: { status: 'ok' } });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output.stdout).toContain('"EventService (gRPC) listening"');
      expect(output.stdout).toContain('"shutdown complete"');
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});
