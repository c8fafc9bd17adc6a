
/** The verified identity of a request: the user, the organization, and every claim of the token. */
export interface AuthResult {
  userId: string
  organizationId?: string
  claims: Record<string, unknown>
}

const userIdClaims = ['userId', 'id', 'sub'] as const
const organizationIdClaims = ['organizationId', 'organization_id', 'orgId'] as const

/** The first of `names` that holds a non-empty string or a finite number, as a string. */
function firstClaim(claims: Record<string, unknown>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = claims[name]
    if (typeof value === 'string' && value !== '') return value
    if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  }
  return undefined
}

/** The identity a verified token carries, or undefined when it names no user. */
export function identityOf(claims: Record<string, unknown>): AuthResult | undefined {
  const userId = firstClaim(claims, userIdClaims)
  if (userId === undefined) return undefined
  const organizationId = firstClaim(claims, organizationIdClaims)
  return organizationId === undefined ? { userId, claims } : { userId, organizationId, claims }
}
