#!/usr/bin/env node
/** The CDK app: `npx cdk deploy -c stage=<name> [-c bedrockModelIds=… -c domainName=… -c certificateArn=…]`. */
import { buildApp } from "#lib/app";

buildApp();
