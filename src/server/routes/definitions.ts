// Registering definitions: the spec's `POST /api/workspace/definitions` (§4.7, a MANAGEMENT token with
// `workspace:write:definition`, no session branch) and the CLI's `POST /api/artifacts` (`push`: the same
// rules for a person's session JWT or `cli_` token). Also registers the auto-baseline job handler.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Schema } from '../../contract/types.js';
import { ARTIFACT_BODY_LIMIT_BYTES, checkArtifactBounds } from '../artifact-bounds.js';
import type { Caller } from '../auth/caller.js';
import { requireManagement, requireSession } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { runBaselineJob } from '../governance/baseline.js';
import type { RegistrationOutcome } from '../governance/definitions.js';
import {
  BASELINE_JOB,
  previewDefinition,
  readDefinitionBody,
  registerDefinition,
  withPrecondition,
} from '../governance/definitions.js';
import { registerJobHandler } from '../governance/jobs.js';
import { expectedVersion } from '../governance/precondition.js';

export function definitionRoutes(app: FastifyInstance, ctx: AppContext): void {
  registerJobHandler(BASELINE_JOB, runBaselineJob);

  const send = (reply: FastifyReply, outcome: RegistrationOutcome) =>
    reply.code(outcome.status).send(outcome.body);

  const bounded = { bodyLimit: ARTIFACT_BODY_LIMIT_BYTES };

  const manager = (caller: Caller) => requireManagement(caller, 'workspace:write:definition', false);
  app.post(
    '/api/workspace/definitions',
    { ...bounded, ...guardBeforeBody(manager) },
    async (request, reply) => {
      const caller = manager(await callerOf(ctx, request));
      const input = withPrecondition(readDefinitionBody(request.body, true), expectedVersion(request));
      checkArtifactBounds(input);
      return send(reply, await registerDefinition(ctx, caller, input, 'definitions'));
    },
  );

  const pushInput = (request: FastifyRequest) => {
    const input = withPrecondition(readDefinitionBody(request.body, false), expectedVersion(request));
    checkArtifactBounds(input);
    return input;
  };
  const pushed = { ...bounded, ...guardBeforeBody(requireSession) };

  app.post('/api/artifacts', pushed, async (request, reply) => {
    const caller = requireSession(await callerOf(ctx, request));
    return send(reply, await registerDefinition(ctx, caller, pushInput(request), 'push'));
  });

  // `push --dry-run`: the push's own checks, rolled back, so a refusal is the push's and not a copy of it.
  app.post('/api/artifacts/dry-run', pushed, async (request) => {
    const caller = requireSession(await callerOf(ctx, request));
    const input = pushInput(request);
    const { body } = await previewDefinition(ctx, caller, input, 'push');
    const preview: Schema<'ArtifactDryRun'> = {
      changed: body.changed !== false,
      state: body.state as Schema<'ArtifactDryRun'>['state'],
      definitionVersion: body.definitionVersion,
      ...(input.replaceId === undefined ? {} : { tableId: body.tableId }),
      ...(body.columns === undefined ? {} : { columns: body.columns }),
    };
    return preview;
  });
}
