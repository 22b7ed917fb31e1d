import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The id of the request being served, wherever its work goes (services, transactions, the jobs
 * it queues), so that a job's log lines name the request that caused it.
 */
const requestIds = new AsyncLocalStorage<string>();

export const withRequestId = (id: string, fn: () => void): void => requestIds.run(id, fn);

export const currentRequestId = (): string | undefined => requestIds.getStore();
