#!/usr/bin/env node
// Runs the TypeScript CLI in this process through tsx's loader, so `npx berth ...` works from a checkout.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
