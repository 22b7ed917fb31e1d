import { BerthError, createBerth } from '@berth/sdk';

/**
 * What a billing system does with Berth: a hosting account when a customer signs up, a
 * suspension when an invoice stays unpaid, and the account back when it is paid. `orderId` makes
 * a retried sign-up (a crash, a timeout) create one account, never two.
 */
export function billing(baseUrl: string, token: string) {
  const berth = createBerth({ baseUrl, token });

  return {
    async signUp(customer: { orderId: string; username: string; email: string; planId: string }) {
      const { data } = await berth.POST('/v1/accounts', {
        headers: { 'Idempotency-Key': `signup-${customer.orderId}` },
        body: { username: customer.username, contact_email: customer.email, plan_id: customer.planId },
      });
      return data!;
    },

    async invoiceOverdue(accountId: string, invoice: string) {
      try {
        await berth.POST('/v1/accounts/{account_id}/suspend', {
          params: { path: { account_id: accountId } },
          body: { reason: `invoice ${invoice} unpaid` },
        });
      } catch (err) {
        // Already suspended (or terminating): nothing more to do.
        if (!(err instanceof BerthError && err.code === 'invalid_state')) throw err;
      }
    },

    async invoicePaid(accountId: string) {
      await berth.POST('/v1/accounts/{account_id}/unsuspend', { params: { path: { account_id: accountId } } });
    },
  };
}
