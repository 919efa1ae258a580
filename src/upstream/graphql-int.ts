/**
 * GraphQL's Int is 32-bit: a number outside it fails serialisation, and with it the whole list it is
 * in. Both adapters' record readers keep only the numbers that fit (pull request numbers, counts).
 */
export function isGraphQLInt(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) <= 2_147_483_647 && (value as number) >= -2_147_483_648;
}
