import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { createMetrics } from '../../src/http/metrics.js';

// A collection on demand, without starting the process with --expose-gc.
v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

it("lets an app's metrics go once nothing of the app holds them (Node's own metrics gathered once per process)", async () => {
  const made = () => {
    const metrics = createMetrics();
    const held = { app: new Array(1000).fill('state') };
    metrics.addGauge({ name: 'berth_release_probe', help: 'probe', labelNames: [], read: async () => [[{}, held.app.length]] });
    return { rendered: metrics.render(), held: new WeakRef(held) };
  };
  const first = made();
  const second = made();
  const texts = [await first.rendered, await second.rendered];
  for (const text of texts) expect(text.match(/^# TYPE nodejs_gc_duration_seconds /gm)).toHaveLength(1);
  // Before, each app registered prom-client's GC observer of its own, never stopped, which held
  // its registry and through it every gauge's source (the app's database, jobs, modules).
  // A WeakRef's target lives to the end of the turn that made or read it: each collection runs in
  // a turn of its own.
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    if (!first.held.deref() && !second.held.deref()) break;
  }
  expect(first.held.deref()).toBeUndefined();
  expect(second.held.deref()).toBeUndefined();
});
