/** The emails module's public surface: what other modules may use. */
export {
  type AddressFields,
  type AddressRow,
  type Autoresponder,
  findAddressById,
  findAddressByName,
  listAddresses,
} from './repo.js';
export { presentAddress } from './representation.js';
export { putBackAddress } from './restore.js';
