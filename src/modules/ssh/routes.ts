import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { createRoute, described, itemDeleteRoute, itemRoute, listRoute, PATCH_DESCRIPTION } from '../../http/crud.js';
import { ifMatchVersion } from '../../http/etag.js';
import { PatchBody, type App } from '../../http/routes.js';
import { IdParams, IfMatchHeaders, PageOnlyQuery } from '../../http/schemas.js';
import { CreateSshKey, PutAccountSsh, SshKeyMutable, SshKeyParams } from './schemas.js';
import type { SshService } from './service.js';

const ACCESS = '/v1/accounts/:account_id/ssh';
const COLLECTION = '/v1/accounts/:account_id/ssh-keys';
const ITEM = `${COLLECTION}/:ssh_key_id`;

export function sshRoutes(app: App, svc: SshService): void {
  const tags = ['ssh'];
  const ids = (req: FastifyRequest) => req.params as { account_id: string; ssh_key_id: string };
  const accountReach = async (req: FastifyRequest) => svc.reachableAccount(callerOf(req), ids(req).account_id);
  const keyReach = async (req: FastifyRequest) => svc.load(callerOf(req), ids(req).account_id, ids(req).ssh_key_id);
  const params = IdParams('acc');

  // The access is a setting of the account, not a resource with a version: no ETag, PUT replaces it.
  app.get(
    ACCESS,
    {
      config: { scope: 'ssh:read', reach: accountReach },
      schema: {
        tags,
        operationId: 'getAccountSsh',
        summary: "Get an account's SSH access",
        description:
          "The mode the account's Unix user is reached in (`disabled` until turned on; never more than the plan's `ssh_access`), and where: `ssh -p <port> <username>@<host>`. A suspended account keeps its mode here but no login is accepted.",
        params,
        response: { 200: Type.Ref('AccountSsh') },
      },
    },
    async (req) => svc.getAccess(callerOf(req), ids(req).account_id),
  );

  app.put(
    ACCESS,
    {
      config: { scope: 'ssh:write', reach: accountReach },
      schema: {
        tags,
        operationId: 'replaceAccountSsh',
        summary: "Set an account's SSH access",
        description:
          "`sftp`: file transfer only, inside a chroot of the account's files, starting in `/sites`; `shell`: a login shell in its login home; `disabled`: no login. More than the plan's `ssh_access` is a 403 `feature_unavailable`. Takes effect at the next login once `sync_state` is `in_sync`. Announced as `account.ssh.updated`.",
        params,
        body: PutAccountSsh,
        response: { 200: Type.Ref('AccountSsh') },
      },
    },
    async (req) => svc.putAccess(callerOf(req), ids(req).account_id, req.body),
  );

  listRoute(app, {
    path: COLLECTION,
    tags,
    operationId: 'listSshKeys',
    summary: "List an account's SSH keys",
    scope: 'ssh:read',
    params,
    reach: accountReach,
    querystring: PageOnlyQuery,
    item: 'SshKey',
    list: (caller, _q, page, req) => svc.list(caller, ids(req).account_id, page),
  });

  createRoute(app, {
    path: COLLECTION,
    tags,
    operationId: 'createSshKey',
    summary: 'Add an SSH key',
    description:
      "A public key that logs in as the account's Unix user (in the mode of its SSH access). Refused with a 422 on `/public_key`: `key_type_not_allowed` (DSA, unknown types), `key_too_small` (RSA under 3072 bits), `invalid_public_key` (not one line of an OpenSSH public key, an options prefix, a type inside the key data other than the one outside, a curve other than the type's). The same key twice on an account: 409 `already_exists`; `max_ssh_keys` applies (403). Announced as `ssh_key.created`.",
    scope: 'ssh:write',
    params,
    reach: accountReach,
    body: CreateSshKey,
    response: 'SshKey',
    create: (caller, body, req) => svc.create(caller, ids(req).account_id, body),
    location: (key) => `/v1/accounts/${key.account_id}/ssh-keys`,
  });

  itemRoute(app, {
    method: 'GET',
    path: ITEM,
    tags,
    operationId: 'getSshKey',
    summary: 'Get an SSH key',
    description: 'The key with its fingerprint, type and size, and its `ETag`. The key itself is not shown again.',
    scope: 'ssh:read',
    reach: keyReach,
    params: SshKeyParams,
    response: 'SshKey',
    run: (caller, p) => svc.get(caller, p.account_id, p.ssh_key_id),
  });

  itemRoute(app, {
    method: 'PATCH',
    path: ITEM,
    tags,
    operationId: 'updateSshKey',
    summary: 'Update an SSH key (JSON Merge Patch)',
    description: described(
      'Its `name` and `allowed_from`; the key itself never changes (add another). Announced as `ssh_key.updated`.',
      PATCH_DESCRIPTION,
    ),
    scope: 'ssh:write',
    reach: keyReach,
    params: SshKeyParams,
    headers: IfMatchHeaders,
    body: Type.Object(PatchBody(SshKeyMutable).properties, { additionalProperties: false }),
    response: 'SshKey',
    run: (caller, p, body, req) => svc.update(caller, p.account_id, p.ssh_key_id, body, ifMatchVersion(req)),
  });

  itemDeleteRoute(app, {
    path: ITEM,
    tags,
    operationId: 'deleteSshKey',
    summary: 'Delete an SSH key',
    description:
      'The next login with it is refused once the account is `in_sync` (a session already open goes on). Announced as `ssh_key.deleted`.',
    scope: 'ssh:write',
    reach: keyReach,
    params: SshKeyParams,
    remove: (caller, p, expectedVersion) => svc.remove(caller, p.account_id, p.ssh_key_id, expectedVersion),
  });
}
