/* CameraControl firmware core: the table of calls in flight. */
#include "cc_call.h"

#include <string.h>

void cc_call_table_init(cc_call_table_t *table)
{
    memset(table, 0, sizeof *table);
}

cc_call_t *cc_call_find(cc_call_table_t *table, uint32_t id)
{
    size_t i;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        cc_call_t *c = &table->calls[i];
        if (c->kind != CC_CALL_FREE && c->id == id) {
            return c;
        }
    }
    return NULL;
}

cc_call_t *cc_call_open(cc_call_table_t *table, uint32_t id, cc_call_kind_t kind)
{
    size_t i;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        cc_call_t *c = &table->calls[i];
        if (c->kind == CC_CALL_FREE) {
            memset(c, 0, sizeof *c);
            c->id = id;
            c->kind = (uint8_t)kind;
            if (kind == CC_CALL_RAW_STREAM) {
                table->raw_streams++;
            }
            return c;
        }
    }
    return NULL;
}

void cc_call_close(cc_call_table_t *table, cc_call_t *call)
{
    if (call->kind == CC_CALL_RAW_STREAM) {   /* counted by cc_call_open: raw_streams >= 1 */
        table->raw_streams--;
    }
    call->kind = CC_CALL_FREE;
    call->id = 0;
}

size_t cc_call_count(const cc_call_table_t *table)
{
    size_t i;
    size_t n = 0;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        if (table->calls[i].kind != CC_CALL_FREE) {
            n++;
        }
    }
    return n;
}

size_t cc_call_table_clear(cc_call_table_t *table)
{
    size_t n = cc_call_count(table);
    size_t i;
    for (i = 0; i < CC_MAX_CONCURRENT_CALLS; i++) {
        cc_call_close(table, &table->calls[i]);
    }
    return n;
}
