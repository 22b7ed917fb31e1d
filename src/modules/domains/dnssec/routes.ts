import { Type } from 'typebox';
import { callerOf } from '../../../http/auth.js';
import { type App, sendAccepted } from '../../../http/routes.js';
import { domainReach } from '../routes.js';
import { DomainParams } from '../schemas.js';
import type { DomainsService } from '../service.js';
import { PutDnssec } from './schemas.js';
import type { DnssecService } from './service.js';

export function dnssecRoutes(app: App, domains: DomainsService, svc: DnssecService): void {
  const reach = domainReach(domains);
  const schema = { tags: ['domains'], params: DomainParams };
  const state = { 200: Type.Ref('DomainDnssec') };
  app.get(
    '/v1/domains/:domain/dnssec',
    {
      config: { scope: 'domains:read', reach },
      schema: {
        ...schema,
        operationId: 'getDomainDnssec',
        summary: "Get the domain's DNSSEC state, keys and DS records",
        description:
          'The DS records are what the registrar needs (`record`, or its fields); Berth computes them from its own keys and checks them against what the DNS server serves.',
        response: state,
      },
    },
    async (req) => svc.get(callerOf(req), req.params.domain),
  );
  app.put(
    '/v1/domains/:domain/dnssec',
    {
      config: { scope: 'domains:write', reach },
      schema: {
        ...schema,
        operationId: 'updateDomainDnssec',
        summary: 'Sign or unsign the zone',
        description:
          "Answers 202 with the state and its `domain.dnssec.update` operation, which ends when the zone is served as asked. Enabling makes a key (Berth keeps it, sealed), signs the zone (NSEC3 as RFC 9276 has it by default) and waits in `pending_ds` for the DS at the parent (`check`, or Berth's own look every hour); it needs the zone's NS records to name this provider's name servers (409 `not_authoritative`). The algorithm of a signed zone cannot change (409 `invalid_state`: disable first). Disabling asks the parent (`BERTH_DNSSEC_RESOLVER`) for a DS first. One for the zone's key, and it is a 409 `ds_still_published`, unless `force: true`, which publishes the CDS/CDNSKEY delete records (RFC 8078) and keeps the zone signed (`pending_disable`) until the DS has been seen gone for its TTL. A DS for another key only counts as gone. None, and the zone is unsigned at once if the DS was never seen there (`parent_ds_seen_at` null); otherwise resolvers may still hold it, and the zone waits in `pending_disable` as well. Events `domain.dnssec.updated`, `domain.dnssec.disabled`, `domain.dnssec.error`.",
        body: PutDnssec,
        response: { 202: Type.Ref('DomainDnssec') },
        'x-errors': ['ds_still_published', 'not_authoritative', 'invalid_state'],
      },
    },
    async (req, reply) => sendAccepted(reply, await svc.update(callerOf(req), req.params.domain, req.body)),
  );
  app.post(
    '/v1/domains/:domain/dnssec/check',
    {
      config: { scope: 'domains:write', reach },
      schema: {
        ...schema,
        operationId: 'checkDomainDnssec',
        summary: 'Look for the DS at the parent',
        description:
          'Asks the parent (through `BERTH_DNSSEC_RESOLVER`) for the DS records of the zone: `pending_ds` turns `active` (`domain.dnssec.active`) once one of them is for the zone’s key, and `pending_disable` unsigns the zone (`domain.dnssec.disabled`) once none for its key has been left for the longest TTL the DS was seen with (a day where it was never read, a week at most): until then a resolver may hold the DS and refuse the unsigned zone’s answers. That time counts from the first look that found the DS gone. `parent_ds_seen_at` records the last time the DS was seen. Berth also looks by itself every hour, for every zone in `pending_ds` or `pending_disable`: this request is for not waiting.',
        response: state,
      },
    },
    async (req) => svc.check(callerOf(req), req.params.domain),
  );
}
