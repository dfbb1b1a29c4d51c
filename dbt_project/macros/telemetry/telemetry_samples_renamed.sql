{#-
    The select of a staging model of GPU telemetry samples (Prometheus and nvidia-smi loads share one
    layout): the sample columns as loaded, with the load's lineage columns renamed to the project's.
-#}
{% macro telemetry_samples_renamed(relation) -%}
    select
        source,
        host,
        gpu_uuid,
        gpu_index,
        gpu_model_name,
        metric,
        value,
        namespace,
        pod,
        container,
        resource_id,
        gpu_instance_id,
        gpu_instance_profile,
        value_invalid,
        promql,
        sampled_at,
        sample_seconds,
        _load_id as x_load_id,
        _ingested_at as x_ingested_at
    from {{ relation }}
{%- endmacro %}
