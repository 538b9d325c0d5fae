import {
  CustomField, CustomFieldCreateBody, CustomFieldList, CustomFieldListQuerystring, CustomFieldParams, CustomFieldsOps, CustomFieldUpdateBody,
} from '@app/shared/contracts';
import { route, type RouteSpec } from './route.js';

/**
 * Custom field definitions (docs/custom-fields.md), served by the tasks service: typed `cf.*`
 * keys owned by the caller (its private tasks) or a group (that group's tasks). Draft: target
 * paths only.
 */
export const customFieldRoutes: RouteSpec[] = [
  route({
    method: 'POST', url: '/api/v1/custom-fields', op: CustomFieldsOps.create,
    input: (req) => req.body,
    summary: "Define a custom field (a typed cf.* key) for the caller's tasks or a group's",
    tag: 'custom-fields', maturity: 'draft', body: CustomFieldCreateBody, response: CustomField, status: 201,
  }),
  route({
    method: 'GET', url: '/api/v1/custom-fields', op: CustomFieldsOps.list,
    input: (req) => ({ ...req.query }),
    summary: "The custom fields in reach (the caller's own, then its groups'), or of one board's scope",
    tag: 'custom-fields', maturity: 'draft', querystring: CustomFieldListQuerystring, response: CustomFieldList,
  }),
  route({
    method: 'GET', url: '/api/v1/custom-fields/:fieldId', op: CustomFieldsOps.get,
    input: (req) => ({ fieldId: req.params.fieldId! }),
    summary: 'One custom field definition', tag: 'custom-fields', maturity: 'draft', params: CustomFieldParams, response: CustomField, conditional: true,
  }),
  route({
    method: 'PATCH', url: '/api/v1/custom-fields/:fieldId', op: CustomFieldsOps.update,
    input: (req) => ({ ...req.body, fieldId: req.params.fieldId! }),
    summary: 'Change a custom field (name, options, type: stored values converted where possible, else 409; If-Match)',
    tag: 'custom-fields', maturity: 'draft', params: CustomFieldParams, body: CustomFieldUpdateBody, response: CustomField, conditional: true,
  }),
  route({
    method: 'DELETE', url: '/api/v1/custom-fields/:fieldId', op: CustomFieldsOps.remove,
    input: (req) => ({ fieldId: req.params.fieldId! }),
    summary: 'Delete a custom field definition (its stored values stay as untyped metadata; If-Match)',
    tag: 'custom-fields', maturity: 'draft', params: CustomFieldParams, status: 204, conditional: true,
  }),
];
