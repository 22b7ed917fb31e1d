import { BerthError, createBerth } from '@berth/sdk';

/**
 * A billing system's provisioning module on Berth, function by function as WHMCS calls a
 * server module (`<module>_CreateAccount($params)` and the rest): each returns `'success'` or
 * the message to show, as WHMCS expects, and never throws for a refusal. README.md maps each
 * function to its Berth calls, for a PHP developer writing the real module.
 *
 * A service is found by its username, which WHMCS keeps per service; the package's first
 * configuration option holds the Berth plan's id.
 */
export interface ServiceParams {
  serviceid: number;
  username: string;
  domain?: string;
  /** The plan (`pln_...`): the product's configuration option 1. */
  configoption1: string;
  clientsdetails: { email: string };
  suspendreason?: string;
}

/** What WHMCS shows for a problem: Berth's code and detail, with the first field at fault. */
const message = (err: unknown): string => {
  if (!(err instanceof BerthError)) return err instanceof Error ? err.message : String(err);
  const field = err.errors[0];
  return `${err.code}: ${err.detail}${field ? ` (${field.pointer} ${field.detail})` : ''}`;
};

const attempt = async (work: () => Promise<unknown>): Promise<string> => {
  try {
    await work();
    return 'success';
  } catch (err) {
    return message(err);
  }
};

export function berthModule(o: { baseUrl: string; token: string }) {
  const berth = createBerth({ baseUrl: o.baseUrl, token: o.token, userAgent: 'billing-module-example' });

  /** The account of a service, by its username (404 as a BerthError when there is none). */
  async function accountOf(params: Pick<ServiceParams, 'username'>) {
    const { data } = await berth.GET('/v1/accounts', { params: { query: { username: params.username, limit: 1 } } });
    const account = data?.data[0];
    if (!account) throw new Error(`no hosting account is named ${params.username}`);
    return account;
  }
  const path = (id: string) => ({ params: { path: { account_id: id } } });

  return {
    /** The account, and its domain if the order names one. Retried (a timeout), it makes one account. */
    CreateAccount: (params: ServiceParams) =>
      attempt(async () => {
        const { data: account } = await berth.POST('/v1/accounts', {
          headers: { 'Idempotency-Key': `whmcs-create-${params.serviceid}` },
          body: { username: params.username, contact_email: params.clientsdetails.email, plan_id: params.configoption1 },
        });
        if (params.domain)
          await berth.POST('/v1/domains', {
            headers: { 'Idempotency-Key': `whmcs-domain-${params.serviceid}` },
            body: { account_id: account!.id, name: params.domain, mail_enabled: true },
          });
      }),

    SuspendAccount: (params: ServiceParams) =>
      attempt(async () => {
        const account = await accountOf(params);
        if (account.status === 'suspended') return;
        await berth.POST('/v1/accounts/{account_id}/suspend', {
          ...path(account.id),
          body: { reason: params.suspendreason || 'suspended by billing' },
        });
      }),

    UnsuspendAccount: (params: ServiceParams) =>
      attempt(async () => {
        const account = await accountOf(params);
        if (account.status === 'active') return;
        await berth.POST('/v1/accounts/{account_id}/unsuspend', path(account.id));
      }),

    /** Terminated: everything of the account goes; waits for the operation to end. */
    TerminateAccount: (params: ServiceParams) =>
      attempt(async () => {
        const account = await accountOf(params);
        const { data } = await berth.DELETE('/v1/accounts/{account_id}', path(account.id));
        await berth.operations.wait((data as { operation: { id: string } }).operation.id);
      }),

    /** Another package: the plan in its configuration option 1 (403 quota_exceeded if the usage is over its limits). */
    ChangePackage: (params: ServiceParams) =>
      attempt(async () => {
        const account = await accountOf(params);
        await berth.PATCH('/v1/accounts/{account_id}', { ...path(account.id), body: { plan_id: params.configoption1 } });
      }),

    /** Single sign-on: a link into the panel, valid 60 s and once. */
    async ServiceSingleSignOn(params: ServiceParams): Promise<{ success: boolean; redirectTo?: string; errorMsg?: string }> {
      try {
        const account = await accountOf(params);
        const { data } = await berth.POST('/v1/accounts/{account_id}/login-links', path(account.id));
        return { success: true, redirectTo: data!.url };
      } catch (err) {
        return { success: false, errorMsg: message(err) };
      }
    },

    /**
     * The daily usage update: every account's disk use and this month's bandwidth (in MB, as WHMCS
     * stores them), from one paged call; `since` keeps the accounts whose usage changed since the
     * last update.
     */
    async UsageUpdate(
      since?: string,
    ): Promise<{ username: string; diskusage: number; bwusage: number; updated_at: string | null }[]> {
      const rows = [];
      for await (const r of berth.list('/v1/usage', { query: since ? { updated_since: since } : {} }))
        rows.push({
          username: r.username,
          diskusage: Math.ceil((r.usage?.disk_bytes ?? 0) / 1024 / 1024),
          bwusage: Math.ceil((r.usage?.bandwidth_bytes ?? 0) / 1024 / 1024),
          updated_at: r.updated_at,
        });
      return rows;
    },

    /** The accounts as WHMCS's server sync imports them. */
    async ListAccounts() {
      const accounts = [];
      for await (const a of berth.list('/v1/accounts')) {
        const { data: domains } = await berth.GET('/v1/domains', { params: { query: { account_id: a.id, limit: 1 } } });
        accounts.push({
          email: a.contact_email,
          username: a.username,
          domain: domains?.data[0]?.name ?? '',
          uniqueIdentifier: a.username,
          product: a.plan_id,
          created: a.created_at,
          status: a.status === 'suspended' ? 'Suspended' : 'Active',
        });
      }
      return accounts;
    },
  };
}
