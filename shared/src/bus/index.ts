export { bind, callerId, Headers, type Binding, type Bus, type CallContext, type CallMeta, type Handler, type Served, type ServeOptions } from './bus.js';
export { dispatch, validate, encodeRequest, encodeOk, encodeError, decodeReplyText, OK_PREFIX, type Reply } from './dispatch.js';
export { MemoryBus } from './memory-bus.js';
export { NatsBus, type NatsBusOptions } from './nats-bus.js';
export { natsErrorToAppError } from './nats-errors.js';
