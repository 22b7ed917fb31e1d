/** The p-th percentile (0–100) of some timings, nearest rank. */
export const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.ceil((p / 100) * xs.length) - 1] ?? NaN;

export const median = (xs: number[]) => percentile(xs, 50);
