import { attachmentDisposition } from '../../../services/files/content-disposition';

/** Content-Disposition of downloads (RFC 6266 with RFC 8187's filename*), rule by rule with its examples. */
describe('attachmentDisposition', () => {
  it.each([
    ['report.pdf', 'attachment; filename="report.pdf"'],
    ['Q3 report (final).pdf', 'attachment; filename="Q3 report (final).pdf"'],
    ['it\'s (1)*.txt', 'attachment; filename="it\'s (1)*.txt"'],
  ])('names a plain-ASCII file as it is: %s', (name, header) => {
    expect(attachmentDisposition(name)).toBe(header);
  });

  it.each([
    ['résumé.pdf', 'attachment; filename="r_sum_.pdf"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9.pdf'],
    ['日本語.txt', 'attachment; filename="___.txt"; filename*=UTF-8\'\'%E6%97%A5%E6%9C%AC%E8%AA%9E.txt'],
    ['📄.txt', 'attachment; filename="_.txt"; filename*=UTF-8\'\'%F0%9F%93%84.txt'],
    // Quotes and backslashes would end or escape the quoted string; ' ( ) * are not RFC 8187 attr-chars.
    ['say "hi"\\.txt', 'attachment; filename="say _hi__.txt"; filename*=UTF-8\'\'say%20%22hi%22%5C.txt'],
    ['naïve it\'s (1)*.txt', 'attachment; filename="na_ve it\'s (1)*.txt"; filename*=UTF-8\'\'na%C3%AFve%20it%27s%20%281%29%2A.txt'],
    // A line break can never split the header.
    ['a\r\nSet-Cookie: x=1', 'attachment; filename="a__Set-Cookie: x=1"; filename*=UTF-8\'\'a%0D%0ASet-Cookie%3A%20x%3D1'],
  ])('gives %p an ASCII stand-in and its UTF-8 name', (name, header) => {
    expect(attachmentDisposition(name)).toBe(header);
    // What the header carries decodes back to the name.
    const encoded = /filename\*=UTF-8''(.*)$/.exec(header)![1];
    expect(decodeURIComponent(encoded)).toBe(name);
  });
});
