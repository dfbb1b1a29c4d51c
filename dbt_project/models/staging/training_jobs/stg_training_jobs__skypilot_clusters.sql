{#-
    SkyPilot clusters, one row per cluster name and launch: a cluster in several captures keeps the row of the
    newest report (captured_at, then the newest load), whose duration and cost are the latest. A relaunched cluster
    of the same name is another row when its launch is at least a day apart from the first (LAUNCHED is relative,
    so the same launch read from two captures can differ by the precision of its unit).
-#}

with

source as (

    select * from {{ source('raw', 'skypilot_clusters') }}

),

ranked as (

    select
        source.*,
        row_number() over (
            partition by cluster_name, cast(launched_at as date)
            order by captured_at desc, _ingested_at desc, source_ref desc
        ) as newest
    from source

),

final as (

    select
        cluster_name,
        launched_at,
        launched_precision,
        captured_at,
        cast(duration_seconds as bigint) as duration_seconds,
        cast(node_count as bigint) as node_count,
        cloud,
        instance_type,
        accelerator,
        cast(accelerators_per_node as decimal(38, 12)) as accelerators_per_node,
        resources,
        status,
        cast(hourly_price as decimal(38, 12)) as hourly_price,
        cast(cost as decimal(38, 12)) as cost,
        currency,
        source_ref,
        source_row,
        _load_id as load_id
    from ranked
    where newest = 1

)

select * from final
