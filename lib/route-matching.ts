/**
 * HTTP API route matching, as API Gateway documents it: a route key `METHOD /path` matches when each
 * `{name}` captures exactly one non-empty segment and the literal segments are equal. Used by the
 * local emulator to pick a route, and by the route-miss Lambda to tell 404 from 405.
 */
export interface Matchable {
  method: string;
  path: string;
}

export function matchPath(template: string, path: string): Record<string, string> | undefined {
  const want = template.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return undefined;
  const parameters: Record<string, string> = {};
  for (const [index, segment] of want.entries()) {
    const actual = got[index] ?? "";
    const name = /^\{([^}+]+)\}$/.exec(segment)?.[1];
    if (name) {
      if (actual === "") return undefined;
      parameters[name] = safeDecode(actual);
    } else if (segment !== actual) {
      return undefined;
    }
  }
  return parameters;
}

export function matchRoute<R extends Matchable>(
  routes: readonly R[],
  method: string,
  path: string,
): { route: R; pathParameters: Record<string, string> } | undefined {
  // Exact (literal) routes win over parameterised ones, as on API Gateway.
  const ranked = [...routes].sort((a, b) => Number(a.path.includes("{")) - Number(b.path.includes("{")));
  for (const route of ranked) {
    if (route.method !== method) continue;
    const pathParameters = matchPath(route.path, path);
    if (pathParameters) return { route, pathParameters };
  }
  return undefined;
}

/** Methods some route accepts on this path (empty: the path is unknown). */
export function allowedMethods(routes: readonly Matchable[], path: string): string[] {
  return [
    ...new Set(
      routes.filter((route) => matchPath(route.path, path) !== undefined).map((route) => route.method),
    ),
  ];
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
