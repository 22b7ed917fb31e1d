import { Type, type Static } from 'typebox';
import { Failure, Id, Nullable, ResourceMeta, StringEnum, Timestamp } from '../../../http/schemas.js';

/** Deployments as the API shows them: each shape declared once (validator, type, document). */

export const Deployment = Type.Object(
  {
    id: Id('dpl'),
    site_id: Id('site'),
    status: StringEnum(['pending', 'live', 'failed', 'superseded', 'pruned'] as const, {
      description:
        '`pending → live | failed`; the live release becomes `superseded` when another goes live (kept for rollback) and `pruned` once only the newest 5 releases are kept.',
    }),
    format: StringEnum(['tar.gz', 'zip'] as const),
    archive_bytes: Nullable(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        format: 'int64',
        description: 'The size of the uploaded archive (null for deployments made before it was recorded).',
      }),
    ),
    size_bytes: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      format: 'int64',
      description: "Unpacked: the bytes of the release's files on disk (what counts against the disk quota).",
    }),
    file_count: Type.Integer({ minimum: 0, maximum: 2_000_000_000, format: 'int32', description: 'Files in the release.' }),
    error: Nullable(Failure),
    live_at: Nullable(Timestamp),
    ...ResourceMeta,
  },
  { $id: 'Deployment', description: 'An uploaded release of a site.' },
);
const DeploymentWithOperation = Type.Object(
  { ...Deployment.properties, operation: Type.Ref('Operation') },
  { $id: 'DeploymentWithOperation' },
);

export type Deployment = Static<typeof Deployment>;

export const DeploymentParams = Type.Object({ site_id: Id('site'), deployment_id: Id('dpl') }, { additionalProperties: false });

/** The media types an archive may be sent as, and the format each means. */
export const ARCHIVE_TYPES: Record<string, 'tar.gz' | 'zip'> = {
  'application/gzip': 'tar.gz',
  'application/x-gzip': 'tar.gz',
  'application/zip': 'zip',
};

export const deploymentSchemas = [Deployment, DeploymentWithOperation];
