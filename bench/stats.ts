/** The p-th percentile (0–100) of some timings, nearest rank. */
export const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.ceil((p / 100) * xs.length) - 1] ?? NaN;

export const median = (xs: number[]) => percentile(xs, 50);

/** The median of some ratios, with the lowest and highest: a paired benchmark's figure. */
export const spread = (xs: number[]) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

/** Pairs of the reference and Berth: each side's median, and the median of the pairs' own ratios with the lowest and highest. */
export const pairedFigure = (pairs: { tarMs: number; berthMs: number }[]) => ({
  tarMs: median(pairs.map((p) => p.tarMs)),
  berthMs: median(pairs.map((p) => p.berthMs)),
  ratio: spread(pairs.map((p) => p.tarMs / p.berthMs)),
  pairs: pairs.length,
});
