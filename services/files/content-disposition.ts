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

/** Printable ASCII without `"` and `\`; anything else becomes `_`. */
function asciiFallbackOf(name: string): string {
  return [...name].map((char) => (/^[\x20-\x7E]$/.test(char) && char !== '"' && char !== '\\' ? char : '_')).join('') || 'file';
}

/** RFC 8187 value-chars: attr-char stays, every other byte of the UTF-8 form is %XX. */
function encodeExtValue(name: string): string {
  // encodeURIComponent leaves ! ' ( ) * unescaped; of these only ! is an attr-char.
  return encodeURIComponent(name).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}
