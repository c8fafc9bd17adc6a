import Type from 'typebox'

const isFile = (value: unknown): value is File => typeof File !== 'undefined' && value instanceof File

/**
 * A TypeBox schema for one uploaded file (what an upload handler receives in `files`): a WHATWG
 * `File`. Use it in an `isSpecial` action's `validation`, e.g.
 * `Type.Object({ fields: Type.Object({...}), files: Type.Object({ attachment: UploadedFile }) })`.
 * In the `schema` intent it is annotations only (a File is not JSON); the check is TypeBox's Refine.
 */
export const UploadedFile = Type.Refine(
  Type.Unsafe<File>({ title: 'UploadedFile', description: 'A file part of a multipart/form-data upload' }),
  isFile,
  () => 'must be an uploaded file',
)

/** One file or several under the same form key (a repeated key arrives as an array). */
export const UploadedFiles = Type.Union([UploadedFile, Type.Array(UploadedFile, { minItems: 1 })])
