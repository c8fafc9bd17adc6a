import t from 'tap'
import { relations, sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  char,
  date,
  integer,
  jsonb,
  numeric,
  pgEnum,
  pgTable,
  real,
  serial,
  smallint,
  text,
  timestamp,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core'
import type { Static } from 'typebox'
import { Compile } from 'typebox/compile'
import { getValidationSchemas, messages } from '../../lib/index.js'
import { onBothDatabases } from '../helpers/postgres.js'

const mood = pgEnum('mood', ['happy', 'sad'])
const everything = pgTable('everything', {
  id: uuid('id').primaryKey().defaultRandom(),
  seq: serial('seq'),
  name: varchar('name', { length: 5 }).notNull(),
  code: char('code', { length: 2 }),
  body: text('body'),
  small: smallint('small'),
  count: integer('count').notNull().default(0),
  big: bigint('big', { mode: 'number' }),
  price: numeric('price', { precision: 5, scale: 2 }),
  ratio: real('ratio'),
  active: boolean('active').notNull(),
  mood: mood('mood'),
  kind: text('kind', { enum: ['a', 'b'] }),
  meta: jsonb('meta'),
  tags: text('tags').array(),
  day: date('day'),
  at: timestamp('at', { withTimezone: true }),
  atText: timestamp('at_text', { mode: 'string' }),
  total: integer('total').generatedAlwaysAs(sql`1`),
  ident: integer('ident').generatedAlwaysAsIdentity(),
  createdAt: timestamp('created_at').notNull().defaultNow(),
})

const { insert, update, select } = getValidationSchemas(everything)
const checkInsert = Compile(insert)
const checkUpdate = Compile(update)
const checkSelect = Compile(select)
const ID = '6f1c2d3e-1234-4abc-8def-0123456789ab'
const minimal = { name: 'ab', active: true }

t.test('insert: required where NOT NULL without a default; generated columns left out', async (t) => {
  t.same([...(insert.required ?? [])].sort(), ['active', 'name'])
  t.same(Object.keys(insert.properties), Object.keys(update.properties))
  t.notOk('total' in insert.properties, 'generatedAlwaysAs is not writable')
  t.notOk('ident' in insert.properties, 'identity always is not writable')
  t.ok(checkInsert.Check(minimal))
  t.notOk(checkInsert.Check({ active: true }), 'name is required')
  t.notOk(checkInsert.Check({ ...minimal, total: 2 }), 'unknown or generated keys are refused')
  t.notOk(checkInsert.Check({ ...minimal, count: null }), 'a NOT NULL column with a default is optional, not nullable')
  t.ok(checkInsert.Check({ ...minimal, body: null, mood: null, code: null }), 'nullable columns take null')
})

t.test('column types', async (t) => {
  const accepts = (data: Record<string, unknown>) => checkInsert.Check({ ...minimal, ...data })
  t.ok(accepts({ id: ID }))
  t.notOk(accepts({ id: 'not-a-uuid' }), 'uuid format')
  t.ok(accepts({ name: '😀😀😀😀😀' }), 'varchar length counts characters')
  t.notOk(accepts({ name: 'abcdef' }), 'varchar(5)')
  t.notOk(accepts({ code: 'abc' }), 'char(2)')
  t.notOk(accepts({ body: 'a\u0000b' }), 'text cannot hold NUL')
  t.ok(accepts({ count: 2147483647, small: -32768 }))
  t.notOk(accepts({ count: 2147483648 }), 'int4 range')
  t.notOk(accepts({ small: 32768 }), 'int2 range')
  t.notOk(accepts({ count: 1.5 }), 'integers')
  t.ok(accepts({ big: Number.MAX_SAFE_INTEGER }))
  t.notOk(accepts({ big: 2 ** 53 }), 'bigint in number mode stays a safe integer')
  t.ok(accepts({ price: '999.99' }))
  t.ok(accepts({ price: '-0.5' }))
  t.notOk(accepts({ price: '1000' }), 'numeric(5,2) holds 3 digits before the point')
  t.notOk(accepts({ price: 1.5 }), 'numeric is a string')
  t.notOk(accepts({ price: 'abc' }))
  t.ok(accepts({ ratio: 0.25 }))
  t.notOk(accepts({ active: 'yes' }), 'booleans')
  t.ok(accepts({ mood: 'happy', kind: 'b' }))
  t.notOk(accepts({ mood: 'angry' }), 'pgEnum values')
  t.notOk(accepts({ kind: 'c' }), 'text enum values')
  t.ok(accepts({ meta: { any: ['json', 1, null] } }))
  t.ok(accepts({ tags: ['a', 'b'] }))
  t.notOk(accepts({ tags: [1] }), 'array items')
  t.ok(accepts({ day: '2030-01-31' }))
  t.notOk(accepts({ day: '2030-01-31T00:00:00Z' }), 'date: a calendar date')
  t.ok(accepts({ at: '2030-01-31T10:00:00.123Z' }))
  t.ok(accepts({ at: '2030-01-31T10:00:00+02:00' }))
  t.notOk(accepts({ at: 'tomorrow' }), 'timestamp: an ISO 8601 date-time string')
  t.notOk(accepts({ at: new Date() }), 'not a Date in the schema (the model converts Dates itself)')
  t.ok(accepts({ atText: '2030-01-31 10:00:00' }), 'string-mode timestamps are strings')
})

t.test('update: every writable column optional, at least one, nothing unknown', async (t) => {
  t.same(update.required ?? [], [])
  t.ok(checkUpdate.Check({ name: 'x' }))
  t.ok(checkUpdate.Check({ body: null }))
  t.notOk(checkUpdate.Check({}), 'an empty update')
  t.notOk(checkUpdate.Check({ name: null }), 'a NOT NULL column cannot be set to null')
  t.notOk(checkUpdate.Check({ nmae: 'x' }), 'an unknown key')
  t.notOk(checkUpdate.Check({ name: 'toolong' }))
})

t.test('select: a row as the driver returns it', async (t) => {
  t.same([...(select.required ?? [])].sort(), Object.keys(select.properties).sort(), 'every column, generated ones too')
  const row = {
    ...Object.fromEntries(Object.keys(select.properties).map((key) => [key, null])),
    id: ID,
    seq: 1,
    name: 'ab',
    count: 0,
    active: false,
    total: 1,
    ident: 1,
    createdAt: new Date(),
    at: new Date(),
  }
  t.ok(checkSelect.Check(row))
  t.notOk(checkSelect.Check({ ...row, createdAt: '2030-01-01T00:00:00Z' }), 'timestamps are Dates in a row')
  t.notOk(checkSelect.Check({ ...row, createdAt: new Date('nope') }), 'an invalid Date')
  t.notOk(checkSelect.Check({ ...row, name: null }))
})

t.test('exported as JSON Schema', async (t) => {
  const json = JSON.parse(JSON.stringify(insert))
  t.match(json, {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'active'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      name: { type: 'string', maxLength: 5 },
      count: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
      body: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      mood: { anyOf: [{ enum: ['happy', 'sad'] }, { type: 'null' }] },
      at: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
    },
  })
  t.match(JSON.parse(JSON.stringify(update)), { minProperties: 1, additionalProperties: false })
})

t.test('static types follow the table', async (t) => {
  const data: Static<typeof insert> = { name: 'ab', active: true, at: '2030-01-01T00:00:00Z', mood: 'happy' }
  // @ts-expect-error `name` is required
  const missing: Static<typeof insert> = { active: true }
  // @ts-expect-error `mood` is one of the enum values
  const wrong: Static<typeof insert> = { name: 'ab', active: true, mood: 'angry' }
  const patch: Static<typeof update> = { body: null }
  const row: Static<typeof select> = {} as typeof everything.$inferSelect
  const created: Date = row.createdAt
  t.ok([data, missing, wrong, patch, created])
})

t.test('throws for a relations(...) object or anything that is not a table', async (t) => {
  t.throws(() => getValidationSchemas(relations(everything, () => ({})) as never), { message: messages.relationSchema })
  for (const notATable of [null, undefined, {}, 'everything', everything.id, { columns: {} }]) {
    t.throws(() => getValidationSchemas(notATable as never), { message: messages.notATable })
  }
})

// What the schema accepts the database stores, and what it refuses the database refuses too.
const samples = pgTable('samples', {
  id: serial('id').primaryKey(),
  count: integer('count'),
  small: smallint('small'),
  name: varchar('name', { length: 5 }),
  body: text('body'),
  ref: uuid('ref'),
  price: numeric('price', { precision: 5, scale: 2 }),
  mood: mood('mood'),
  at: timestamp('at', { withTimezone: true }),
  day: date('day'),
  required: integer('required').notNull().default(0),
})
const setup = `
  CREATE TYPE mood AS ENUM ('happy', 'sad');
  CREATE TABLE samples (
    id serial PRIMARY KEY, count integer, small smallint, name varchar(5), body text, ref uuid,
    price numeric(5, 2), mood mood, at timestamptz, day date, required integer NOT NULL DEFAULT 0
  );
`
const cases: Array<[column: keyof typeof samples.$inferInsert & string, value: unknown, accepted: boolean]> = [
  ['count', 2147483647, true],
  ['count', 2147483648, false],
  ['count', -2147483649, false],
  ['count', 1.5, false],
  ['small', -32768, true],
  ['small', 32768, false],
  ['name', 'abcde', true],
  ['name', 'abcdef', false],
  ['name', 'äöüßé', true],
  ['body', 'a\u0000b', false],
  ['ref', ID, true],
  ['ref', 'abc', false],
  ['price', '999.99', true],
  ['price', '-999.99', true],
  ['price', '1000', false],
  ['price', 'abc', false],
  ['mood', 'sad', true],
  ['mood', 'angry', false],
  ['at', '2030-01-31T10:00:00.123+02:00', true],
  ['at', 'not a time', false],
  ['day', '2030-02-28', true],
  ['day', '2030-02-30', false],
  ['required', null, false],
  ['count', null, true],
]

onBothDatabases(t, setup, async (t, database) => {
  const check = Compile(getValidationSchemas(samples).insert)
  const column = (key: string) => samples[key as 'count'].name
  for (const [key, value, accepted] of cases) {
    const stored = await database.db
      .execute(sql`insert into samples (${sql.identifier(column(key))}) values (${value})`)
      .then(() => true, () => false)
    t.equal(stored, accepted, `the database ${accepted ? 'stores' : 'refuses'} ${key} = ${JSON.stringify(value)}`)
    t.equal(check.Check({ [key]: value }), accepted, `the schema ${accepted ? 'accepts' : 'refuses'} ${key} = ${JSON.stringify(value)}`)
  }
})
