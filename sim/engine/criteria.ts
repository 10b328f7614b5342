/** One numeric pass criterion, with the measured value beside it. */
export interface Criterion {
  /** What is measured, in words ("limit at the end, vs capacity 50"). */
  readonly name: string;
  readonly measured: number;
  /** The bound, written as the reader should see it ("<= 1.2", "in [40, 60]"). */
  readonly criterion: string;
  readonly unit: string;
  readonly pass: boolean;
}

function finite(value: number): boolean {
  return typeof value === 'number' && Number.isFinite(value);
}

export function atMost(name: string, measured: number, bound: number, unit = ''): Criterion {
  return { name, measured, criterion: `<= ${fmt(bound)}`, unit, pass: finite(measured) && measured <= bound };
}

export function atLeast(name: string, measured: number, bound: number, unit = ''): Criterion {
  return { name, measured, criterion: `>= ${fmt(bound)}`, unit, pass: finite(measured) && measured >= bound };
}

export function lessThan(name: string, measured: number, bound: number, unit = ''): Criterion {
  return { name, measured, criterion: `< ${fmt(bound)}`, unit, pass: finite(measured) && measured < bound };
}

export function within(name: string, measured: number, low: number, high: number, unit = ''): Criterion {
  return {
    name,
    measured,
    criterion: `in [${fmt(low)}, ${fmt(high)}]`,
    unit,
    pass: finite(measured) && measured >= low && measured <= high,
  };
}

/** A yes/no fact (measured 1 or 0). */
export function holds(name: string, fact: boolean): Criterion {
  return { name, measured: fact ? 1 : 0, criterion: '= 1 (yes)', unit: '', pass: fact };
}

/** Rounds for display and for the JSON report: 4 significant digits, integers kept whole. */
export function fmt(value: number): string {
  if (value === undefined || value === null || Number.isNaN(value)) return 'n/a';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toFixed(0);
  if (abs >= 100) return value.toFixed(1);
  if (abs >= 10) return value.toFixed(2);
  return value.toPrecision(3);
}
