// patches/kafkajs+2.2.4.patch makes kafkajs's protocol encoder take its buffers with
// Buffer.allocUnsafe instead of Buffer.alloc (zero-filled, one backing store per record and header:
// the largest share of a producer batch's encoding CPU). That is only sound while the encoder never
// lets out a byte it did not write, which these tests check: the bytes of a record batch do not
// depend on what the memory held, and they decode to the records given.

// eslint-disable-next-line @typescript-eslint/no-require-imports -- kafkajs's internal modules have no types; the casts state the shapes used
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as { RecordBatch: (batch: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
const Record = require('kafkajs/src/protocol/recordBatch/record/v0') as (record: Record<string, unknown>) => unknown;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => { readInt64(): unknown; readInt32(): number };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
const decodeRecordBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (decoder: unknown) => Promise<{
  records: Array<{ key: Buffer; value: Buffer; headers: Record<string, Buffer> }>;
}>;

const messages = Array.from({ length: 40 }, (_, index) => ({
  key: `key-${index}`,
  value: JSON.stringify({ index, text: 'é'.repeat(index * 7), long: 'x'.repeat(index * 50) }),
  headers: { id: `id-${index}`, type: 'crm.contact.created', tenantId: '0190f0e1-aaaa-7bbb-8ccc-dddddddddddd' },
}));

/** The batch's bytes when every unfilled buffer holds `fill` (what the memory happened to hold). */
async function encodeOver(fill: number): Promise<Buffer> {
  const unsafe = jest.spyOn(Buffer, 'allocUnsafe').mockImplementation((size) => Buffer.allocUnsafeSlow(size).fill(fill));
  try {
    const records = messages.map((message, offsetDelta) => Record({ offsetDelta, timestampDelta: 0, ...message }));
    const { buffer } = await RecordBatch({ firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_000, lastOffsetDelta: records.length - 1, records });
    return Buffer.from(buffer);
  } finally {
    unsafe.mockRestore();
  }
}

describe('kafkajs protocol encoder (patched)', () => {
  it('takes no zero-filled buffers', async () => {
    const zeroed = jest.spyOn(Buffer, 'alloc');
    try {
      await encodeOver(0);
      expect(zeroed).not.toHaveBeenCalled();
    } finally {
      zeroed.mockRestore();
    }
  });

  it('encodes the same bytes whatever the memory held, and they decode to the records', async () => {
    const overOnes = await encodeOver(0xff);
    expect(overOnes.equals(await encodeOver(0x00))).toBe(true);
    expect(overOnes.equals(await encodeOver(0x5a))).toBe(true);

    const decoder = new Decoder(overOnes);
    const { records } = await decodeRecordBatch(decoder);
    expect(records.map(({ key, value, headers }) => ({
      key: key.toString(), value: value.toString(), headers: Object.fromEntries(Object.entries(headers).map(([name, header]) => [name, header.toString()])),
    }))).toEqual(messages);
  });
});
