export {
  bind, callerId, Headers, replyMetaFrom, replyMetaHeaders,
  type Binding, type Bus, type BusReply, type CallContext, type CallMeta, type Handler, type IdempotencyInput, type ReplyMeta, type Served, type ServeOptions,
} from './bus.js';
export { dispatch, dispatchReply, decodeReply, validate, encodeRequest, encodeOk, encodeError, decodeReplyText, OK_PREFIX, type Reply } from './dispatch.js';
export { EncodedJson, FrozenJsonMemo, jsonText } from './json-text.js';
export { MemoryBus } from './memory-bus.js';
export { NatsBus, type NatsBusOptions } from './nats-bus.js';
export { natsErrorToAppError } from './nats-errors.js';
export { isNoResponders, noResponders, NoResponders } from './no-responders.js';
export { currentGrant, GrantHeaders, grantHeaders, grantFrom } from './grant.js';
