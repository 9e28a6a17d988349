/**
 * The stage's alarms on what the root and its concerns share, and its one dashboard, in a nested
 * stack of its own (every function's own errors and throttles alarms sit beside the function,
 * lib/lambda-functions.ts). Every alarm notifies the root's alarm topic, on ALARM and on OK.
 * docs/operations.md says, for each alarm, what it means and what to do.
 */
import { Duration, NestedStack, type NestedStackProps } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IAlarmAction,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { Operation, type Table } from "aws-cdk-lib/aws-dynamodb";
import type { Function as LambdaFunction } from "aws-cdk-lib/aws-lambda";
import type { Queue } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { type MetricName, metricCatalog, metricsNamespace } from "#functions/observability/metrics";

export interface MonitoringStackProps extends NestedStackProps {
  stage: string;
  api: HttpApi;
  table: Table;
  /** The stream function: its function URL is the second API. */
  streamFunction: LambdaFunction;
  /** The table stream's fan-out. */
  eventFanout: LambdaFunction;
  /** Queues whose every message is a failure to look at (dead-letter and on-failure queues). */
  failureQueues: readonly Queue[];
  accountConcurrencyLimit: number;
  alarmAction: IAlarmAction;
}

const period = Duration.minutes(5);

/** The table operations the functions use: the ones whose throttles and system errors alarm. */
const tableOperations = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.QUERY,
  Operation.BATCH_GET_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
];

export class MonitoringStack extends NestedStack {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: MonitoringStackProps) {
    super(scope, id, props);
    const { stage, api, table, streamFunction, eventFanout } = props;
    /** An application metric, the stage's total (dimensions: Stage). */
    const total = (name: MetricName, statistic = "Sum") =>
      new Metric({
        namespace: metricsNamespace,
        metricName: name,
        dimensionsMap: { Stage: stage },
        statistic,
        period,
      });
    /** An application metric broken down by its own dimensions (a search: one line per value). */
    const byDimensions = (name: MetricName, statistic = "Sum") =>
      new MathExpression({
        expression: `SEARCH('{${metricsNamespace},${["Stage", ...metricCatalog[name].dimensions].join(",")}} MetricName="${name}" Stage="${stage}"', '${statistic}', 300)`,
        label: "",
        period,
      });
    const alarm = (
      id: string,
      description: string,
      metric: IMetric,
      threshold: number,
      options: { evaluationPeriods?: number; datapointsToAlarm?: number } = {},
    ) => {
      const created = new Alarm(this, id, {
        alarmDescription: `${description} (docs/operations.md, Alarms, "${id}")`,
        metric,
        threshold,
        evaluationPeriods: options.evaluationPeriods ?? 1,
        datapointsToAlarm: options.datapointsToAlarm ?? options.evaluationPeriods ?? 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(props.alarmAction);
      created.addOkAction(props.alarmAction);
      this.alarms.push(created);
      return created;
    };

    // The visitors' experience: a throttled or denied model is a 200 with the fallback reply.
    const fallbackRate = new MathExpression({
      expression: "IF(turns >= 10, 100 * fallbacks / turns, 0)",
      usingMetrics: { turns: total("Turns"), fallbacks: total("Fallbacks") },
      label: "Fallback replies, % of turns",
      period,
    });
    alarm(
      "FallbackRate",
      "10 % or more of the turns answered with the fallback reply, 3 periods of 5 minutes running",
      fallbackRate,
      10,
      {
        evaluationPeriods: 3,
      },
    );

    // The HTTP API (public and management routes) and the stream's function URL.
    const apiErrorRate = new MathExpression({
      expression: "IF(requests >= 20, 100 * errors / requests, 0)",
      usingMetrics: {
        requests: api.metricCount({ period, statistic: "Sum" }),
        errors: api.metricServerError({ period, statistic: "Sum" }),
      },
      label: "HTTP API 5xx, % of requests",
      period,
    });
    alarm(
      "ApiServerErrorRate",
      "5 % or more of the HTTP API's requests answered 5xx in 5 minutes",
      apiErrorRate,
      5,
    );
    alarm(
      "ApiLatencyP99",
      "The HTTP API's p99 latency at 15 s or more, 2 periods of 5 minutes running",
      api.metricLatency({ period, statistic: "p99" }),
      15_000,
      { evaluationPeriods: 2 },
    );
    const streamErrorRate = new MathExpression({
      expression: "IF(requests >= 20, 100 * errors / requests, 0)",
      usingMetrics: {
        requests: streamFunction.metric("UrlRequestCount", { period, statistic: "Sum" }),
        errors: streamFunction.metric("Url5xxCount", { period, statistic: "Sum" }),
      },
      label: "Stream endpoint 5xx, % of requests",
      period,
    });
    alarm(
      "StreamServerErrorRate",
      "5 % or more of the stream endpoint's requests answered 5xx in 5 minutes",
      streamErrorRate,
      5,
    );
    alarm(
      "StreamLatencyP99",
      "The stream endpoint's p99 request latency at 25 s or more, 2 periods of 5 minutes running",
      streamFunction.metric("UrlRequestLatency", { period, statistic: "p99" }),
      25_000,
      { evaluationPeriods: 2 },
    );
    alarm(
      "AuthorizerFailures",
      "5 or more requests in 5 minutes that an authorizer could not decide (503 or 500)",
      total("AuthorizerFailures"),
      5,
    );

    // Messages kept aside for a person to look at.
    for (const queue of props.failureQueues) {
      alarm(
        `${queue.node.id}Depth`,
        `A message waits in ${queue.node.id}`,
        queue.metricApproximateNumberOfMessagesVisible({ period, statistic: "Maximum" }),
        1,
      );
    }

    // The table stream's fan-out: behind, or failing.
    alarm(
      "FanoutIteratorAge",
      "The fan-out is 5 minutes or more behind the table's stream, 2 periods of 5 minutes running",
      eventFanout.metric("IteratorAge", { period, statistic: "Maximum" }),
      300_000,
      { evaluationPeriods: 2 },
    );

    // The table.
    const tableThrottles = table.metricThrottledRequestsForOperations({
      operations: tableOperations,
      period,
    });
    alarm("TableThrottles", "10 or more table requests throttled in 5 minutes", tableThrottles, 10);
    const tableErrors = table.metricSystemErrorsForOperations({ operations: tableOperations, period });
    alarm(
      "TableSystemErrors",
      "5 or more table requests failed with a DynamoDB system error in 5 minutes",
      tableErrors,
      5,
    );

    // The account's Lambda concurrency, shared by every function of every stack in the region.
    const concurrency = new Metric({
      namespace: "AWS/Lambda",
      metricName: "ConcurrentExecutions",
      statistic: "Maximum",
      period: Duration.minutes(1),
    });
    alarm(
      "AccountConcurrency",
      `Lambda concurrency in the region at 80 % or more of the account's ${props.accountConcurrencyLimit}, 3 minutes running`,
      concurrency,
      Math.floor(props.accountConcurrencyLimit * 0.8),
      { evaluationPeriods: 3 },
    );

    this.dashboard = new Dashboard(this, "Dashboard", {
      dashboardName: `ChatbotApi-${stage}`,
      defaultInterval: Duration.hours(3),
    });
    const graph = (title: string, left: IMetric[], width = 8) =>
      new GraphWidget({ title, left, width, height: 6 });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# Chatbot API: ${stage}\nAlarms and what to do: docs/operations.md. Function errors and throttles alarm per function (their own stacks).`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph("Turns by engine and outcome", [byDimensions("Turns")]),
      graph("Fallbacks by reason", [byDimensions("Fallbacks")]),
      graph("Fallback replies, % of turns", [fallbackRate]),
    );
    this.dashboard.addWidgets(
      graph("Model latency p50 / p99 (ms)", [
        byDimensions("ModelLatency", "p50"),
        byDimensions("ModelLatency", "p99"),
      ]),
      graph("Model tokens", [byDimensions("ModelInputTokens"), byDimensions("ModelOutputTokens")]),
      graph("Look-ups by outcome", [byDimensions("Lookups")]),
    );
    this.dashboard.addWidgets(
      graph("HTTP API requests, 4xx, 5xx", [
        api.metricCount({ period }),
        api.metricClientError({ period }),
        api.metricServerError({ period }),
      ]),
      graph("HTTP API latency p50 / p99 (ms)", [
        api.metricLatency({ period, statistic: "p50" }),
        api.metricLatency({ period, statistic: "p99" }),
        api.metricIntegrationLatency({ period, statistic: "p99" }),
      ]),
      graph("Stream endpoint requests, 5xx, p99 latency", [
        streamFunction.metric("UrlRequestCount", { period, statistic: "Sum" }),
        streamFunction.metric("Url5xxCount", { period, statistic: "Sum" }),
        streamFunction.metric("UrlRequestLatency", { period, statistic: "p99" }),
      ]),
    );
    this.dashboard.addWidgets(
      graph("Rate-limited requests by API", [byDimensions("RateLimited")]),
      graph("Authorizer failures", [byDimensions("AuthorizerFailures")]),
      graph("Webhook deliveries by outcome", [byDimensions("WebhookDeliveries")]),
    );
    this.dashboard.addWidgets(
      graph(
        "Dead-letter and failure queues",
        props.failureQueues.map((queue) =>
          queue.metricApproximateNumberOfMessagesVisible({
            period,
            statistic: "Maximum",
            label: queue.node.id,
          }),
        ),
      ),
      graph("Fan-out iterator age (ms)", [
        eventFanout.metric("IteratorAge", { period, statistic: "Maximum" }),
      ]),
      graph("Timer checks and ingestion jobs", [byDimensions("TimerChecks"), byDimensions("IngestionJobs")]),
    );
    this.dashboard.addWidgets(
      graph("Table capacity used", [
        table.metricConsumedReadCapacityUnits({ period }),
        table.metricConsumedWriteCapacityUnits({ period }),
      ]),
      graph("Table throttled requests", [tableThrottles]),
      graph("Table system errors", [tableErrors]),
    );
    this.dashboard.addWidgets(graph("Lambda concurrency (account, region)", [concurrency], 24));
    this.dashboard.addWidgets(
      new AlarmStatusWidget({ title: "Shared alarms", alarms: this.alarms, width: 24, height: 4 }),
    );
  }
}
