interface Signature {
  type: string
  /** Bytes to match from the start; `undefined` matches any byte. */
  bytes: ReadonlyArray<number | undefined>
}

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0))

// Checked in order against the first 12 bytes.
const signatures: readonly Signature[] = [
  { type: 'image/png', bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
  { type: 'image/jpeg', bytes: [0xff, 0xd8, 0xff] },
  { type: 'image/gif', bytes: ascii('GIF87a') },
  { type: 'image/gif', bytes: ascii('GIF89a') },
  { type: 'application/pdf', bytes: ascii('%PDF-') },
  // A local file header, an empty archive, a spanned archive.
  { type: 'application/zip', bytes: [0x50, 0x4b, 0x03, 0x04] },
  { type: 'application/zip', bytes: [0x50, 0x4b, 0x05, 0x06] },
  { type: 'application/zip', bytes: [0x50, 0x4b, 0x07, 0x08] },
  { type: 'image/webp', bytes: [...ascii('RIFF'), undefined, undefined, undefined, undefined, ...ascii('WEBP')] },
]

const HEADER_LENGTH = 12

function matches(head: Uint8Array, { bytes }: Signature): boolean {
  return head.length >= bytes.length && bytes.every((byte, index) => byte === undefined || head[index] === byte)
}

/**
 * The MIME type a blob's first 12 bytes announce: PNG, JPEG, GIF, PDF, ZIP or WebP; null otherwise.
 * It reads the content, not the declared type, and is not part of the upload validation chain.
 */
export async function detectMimeType(blob: Blob): Promise<string | null> {
  const head = new Uint8Array(await blob.slice(0, HEADER_LENGTH).arrayBuffer())
  return signatures.find((signature) => matches(head, signature))?.type ?? null
}
