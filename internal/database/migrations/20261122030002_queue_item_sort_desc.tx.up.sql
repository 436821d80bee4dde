CREATE INDEX IF NOT EXISTS annotation_queue_items_created_desc ON annotation_queue_items (project_id, queue_id, created_at DESC, id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queue_items_updated_desc ON annotation_queue_items (project_id, queue_id, updated_at DESC, id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queue_items_started_desc ON annotation_queue_items (project_id, queue_id, call_started_at DESC, id) WHERE deleted_at IS NULL;
--bun:split
CREATE INDEX IF NOT EXISTS annotation_queue_items_op_desc ON annotation_queue_items (project_id, queue_id, call_op_name DESC, id) WHERE deleted_at IS NULL;
