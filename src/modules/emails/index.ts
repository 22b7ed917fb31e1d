/** The emails module's public surface: what other modules may use. */
export {
  type AddressFields,
  type AddressRow,
  type Autoresponder,
  findAddressById,
  findAddressByName,
  insertAddress,
  listAddresses,
  updateAddress,
} from './repo.js';
export { addressEvent, presentAddress } from './representation.js';
export { touchMailUnit } from './unit.js';
