/**
 * CloudWatch Embedded Metric Format (EMF): a metric is a JSON log line that CloudWatch Logs turns
 * into CloudWatch metrics, with no API call and no extra latency. This writes the specification's
 * document exactly: `_aws.Timestamp` (epoch milliseconds), `_aws.CloudWatchMetrics` (directives of a
 * namespace, dimension sets and metric definitions), and the dimension values and metric values as
 * root members. The specification's limits are checked: at most 100 metrics a document, 30
 * dimensions a set, 100 values a metric, names of 1–255 characters; non-finite values are dropped
 * (CloudWatch rejects the whole document for one).
 *
 * Why not a library: Powertools for AWS Lambda (TypeScript) Metrics 2.36.0 bundles to 15.2 KB
 * (metrics 10.5 KB, commons 2.7 KB, @aws/lambda-invoke-store 2.2 KB) and its import costs about
 * 4.5 ms more CPU than an empty module's on the build machine (least of 15: 6.2 ms against 1.6 ms),
 * some 10 % of the message function's whole init; this module costs about 1 KB. docs/operations.md
 * has the figures.
 */

/** The units CloudWatch accepts (its `StandardUnit` list). */
export type Unit =
  | "Seconds"
  | "Microseconds"
  | "Milliseconds"
  | "Bytes"
  | "Kilobytes"
  | "Megabytes"
  | "Gigabytes"
  | "Terabytes"
  | "Bits"
  | "Kilobits"
  | "Megabits"
  | "Gigabits"
  | "Terabits"
  | "Percent"
  | "Count"
  | "Bytes/Second"
  | "Kilobytes/Second"
  | "Megabytes/Second"
  | "Gigabytes/Second"
  | "Terabytes/Second"
  | "Bits/Second"
  | "Kilobits/Second"
  | "Megabits/Second"
  | "Gigabits/Second"
  | "Terabits/Second"
  | "Count/Second"
  | "None";

export interface MetricDirective {
  namespace: string;
  /** Each set of dimension names yields one metric per metric below; `[]` is the undimensioned total. */
  dimensionSets: readonly (readonly string[])[];
  metrics: readonly { name: string; unit: Unit }[];
}

export const emfLimits = { metrics: 100, dimensionsPerSet: 30, values: 100, nameLength: 255 } as const;

function checkName(kind: string, name: string): void {
  if (name.length < 1 || name.length > emfLimits.nameLength) {
    throw new Error(
      `EMF: ${kind} name must have 1–${emfLimits.nameLength} characters: ${JSON.stringify(name)}`,
    );
  }
}

/**
 * One EMF document as one line. `dimensions` holds every dimension a directive names, `values` every
 * metric's value (a number or up to 100 of them); `properties` are further searchable members (a
 * request id). A metric whose value is missing or not finite is left out of its directive.
 */
export function emfDocument(options: {
  directives: readonly MetricDirective[];
  dimensions: Readonly<Record<string, string>>;
  values: Readonly<Record<string, number | readonly number[] | undefined>>;
  properties?: Readonly<Record<string, string | number | boolean | undefined>>;
  timestamp?: number;
}): string | undefined {
  const values: Record<string, number | number[]> = {};
  for (const [name, value] of Object.entries(options.values)) {
    const finite = (Array.isArray(value) ? value : [value]).filter(
      (item): item is number => typeof item === "number" && Number.isFinite(item),
    );
    if (finite.length > emfLimits.values)
      throw new Error(`EMF: ${name} has more than ${emfLimits.values} values`);
    if (finite.length > 0) values[name] = Array.isArray(value) ? finite : (finite[0] as number);
  }
  const directives = options.directives
    .map((directive) => ({
      ...directive,
      metrics: directive.metrics.filter((metric) => metric.name in values),
    }))
    .filter((directive) => directive.metrics.length > 0);
  if (directives.length === 0) return undefined;
  const metricCount = directives.reduce((count, directive) => count + directive.metrics.length, 0);
  if (metricCount > emfLimits.metrics)
    throw new Error(`EMF: more than ${emfLimits.metrics} metrics in one document`);
  for (const directive of directives) {
    checkName("namespace", directive.namespace);
    for (const set of directive.dimensionSets) {
      if (set.length > emfLimits.dimensionsPerSet) {
        throw new Error(`EMF: more than ${emfLimits.dimensionsPerSet} dimensions in a set`);
      }
      for (const dimension of set) {
        checkName("dimension", dimension);
        const value = options.dimensions[dimension];
        if (typeof value !== "string" || value.length === 0)
          throw new Error(`EMF: no value for dimension ${dimension}`);
      }
    }
    for (const metric of directive.metrics) checkName("metric", metric.name);
  }
  const properties = Object.fromEntries(
    Object.entries(options.properties ?? {}).filter(([, value]) => value !== undefined),
  );
  return JSON.stringify({
    ...properties,
    ...options.dimensions,
    ...values,
    _aws: {
      Timestamp: options.timestamp ?? Date.now(),
      CloudWatchMetrics: directives.map((directive) => ({
        Namespace: directive.namespace,
        Dimensions: directive.dimensionSets,
        Metrics: directive.metrics.map((metric) => ({ Name: metric.name, Unit: metric.unit })),
      })),
    },
  });
}
