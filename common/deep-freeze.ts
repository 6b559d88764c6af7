/** `value` and every object under it frozen: a shared value no holder can change for the others. */
export function deepFreeze<T>(value: T): Readonly<T> {
  for (const child of Object.values(value as object)) {
    if (child && typeof child === 'object') deepFreeze(child);
  }
  return Object.freeze(value);
}
