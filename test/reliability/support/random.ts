import { mulberry32 } from '../../helpers/mulberry32';
/** A small, fast, seeded uniform source in [0, 1) (mulberry32). */
export const seeded = mulberry32;
