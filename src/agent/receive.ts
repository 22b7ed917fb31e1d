import { Value } from 'typebox/value';
import { type AgentReport, AgentUnit, AgentUnitHead } from '../provisioning/agent-units.js';

/**
 * The units of a poll, checked against their schema before anything is applied: the agent acts
 * only on specs it understands. One it cannot read is reported failed with the reason (when its
 * kind, key and generation can be told), and holds back no other.
 */
export function receiveUnits(raw: unknown): { units: AgentUnit[]; refused: AgentReport[] } {
  const units: AgentUnit[] = [];
  const refused: AgentReport[] = [];
  for (const unit of Array.isArray(raw) ? raw : []) {
    if (Value.Check(AgentUnit, unit)) units.push(unit);
    else if (Value.Check(AgentUnitHead, unit)) {
      const kindSchema = AgentUnit.anyOf.find((s) => s.properties.kind.const === unit.kind) ?? AgentUnit;
      const first = Value.Errors(kindSchema, unit)[0];
      const where = first ? `${first.instancePath || '/'} ${first.message}` : 'unreadable';
      refused.push({
        kind: unit.kind,
        key: unit.key,
        generation: unit.generation,
        error: `the unit's spec is not one this agent applies: ${where}`.slice(0, 1000),
      });
    }
  }
  return { units, refused };
}
