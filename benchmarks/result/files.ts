/**
 * Kept for `campaign/tune/`, which imports these from here; the store (`store.ts`) is their home.
 * Remove once its imports name the store.
 */
export { readResult, safeName } from "./store";
