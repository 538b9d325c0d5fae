import { describe, expect, it } from 'vitest';
import { idFromPath, idFromSubject, operationIdOf } from '../../src/routes/operation-ids.js';

describe('operation ids made from a route row', () => {
  it('makes verbNoun from an op subject: the action verb, the service noun, the action rest', () => {
    expect(idFromSubject('tasks.get')).toBe('getTask');
    expect(idFromSubject('boards.list')).toBe('listBoards');
    expect(idFromSubject('boards.addMember')).toBe('addBoardMember');
    expect(idFromSubject('custom-fields.create')).toBe('createCustomField');
  });

  it('makes verbNoun from a method and path when the row has no op', () => {
    expect(idFromPath('GET', '/api/v1/tokens')).toBe('listTokens');
    expect(idFromPath('GET', '/api/v1/custom-fields/:fieldId')).toBe('getCustomField');
    expect(idFromPath('POST', '/api/v1/imports')).toBe('createImport');
    expect(idFromPath('DELETE', '/api/v1/views/:viewId')).toBe('deleteView');
  });

  it('prefers the row\'s own id, then the override table', () => {
    expect(operationIdOf({ method: 'POST', url: '/x', operationId: 'doThing', op: { subject: 'tasks.create' } })).toBe('doThing');
    expect(operationIdOf({ method: 'POST', url: '/x', op: { subject: 'sprints.close' } })).toBe('closeSprint');
    expect(operationIdOf({ method: 'POST', url: '/x', op: { subject: 'boards.move' } })).toBe('moveCard');
  });
});
