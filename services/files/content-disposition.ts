/**
 * `Content-Disposition: attachment` for a file's original name (RFC 6266): `filename` carries a
 * plain-ASCII stand-in for old clients, `filename*` (RFC 8187, UTF-8, percent-encoded) the name as
 * uploaded whenever the stand-in differs. Quotes, backslashes and control characters never reach
 * the header, so a name cannot end the parameter or the header line.
 */
export function attachmentDisposition(originalName: string): string {
  const fallback = asciiFallbackOf(originalName);
  const header = `attachment; filename="${fallback}"`;
  return fallback === originalName ? header : `${header}; filename*=UTF-8''${encodeExtValue(originalName)}`;
}

/**
 * The types a presigned URL lets a browser show in place (`inline`): raster images and PDF, which a
 * browser renders without running anything of the file's in the object store's origin. Every other
 * type is answered `attachment`, so it is saved, never opened: SVG, HTML, XHTML and XML can carry
 * scripts that would run in that origin, and a type the list does not know could be sniffed into one
 * (the store sends no X-Content-Type-Options). An allow-list, so a new active type is never inline
 * by oversight (docs/decisions/files.md, "Active content is served as an attachment").
 */
const INLINE_TYPES: ReadonlySet<string> = new Set([
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp', 'application/pdf',
]);

/** Whether a file of `mimeType` may be shown in place; parameters and case do not change the type. */
export function servedInline(mimeType: string): boolean {
  return INLINE_TYPES.has(mimeType.split(';')[0].trim().toLowerCase());
}

/** Printable ASCII without `"` and `\`; anything else becomes `_`. */
function asciiFallbackOf(name: string): string {
  return [...name].map((char) => (/^[\x20-\x7E]$/.test(char) && char !== '"' && char !== '\\' ? char : '_')).join('') || 'file';
}

/** RFC 8187 value-chars: attr-char stays, every other byte of the UTF-8 form is %XX. */
function encodeExtValue(name: string): string {
  // encodeURIComponent leaves ! ' ( ) * unescaped; of these only ! is an attr-char.
  return encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}
