{#-
    Slurm job allocations, one row per cluster and job: a job in several exports (running in one, finished in the
    next) keeps the row of the newest load, then the latest export file name.
-#}

with

source as (

    select * from {{ source('raw', 'slurm_jobs') }}

),

ranked as (

    select
        source.*,
        row_number() over (
            partition by coalesce(cluster, ''), job_id
            order by _ingested_at desc, source_ref desc
        ) as newest
    from source

),

final as (

    select
        cluster,
        job_id,
        job_name,
        user_name,
        account,
        partition,
        submitted_at,
        started_at,
        ended_at,
        cast(elapsed_seconds as bigint) as elapsed_seconds,
        state,
        state_as_delivered,
        cast(node_count as bigint) as node_count,
        node_list,
        hosts,
        cast(gpus as bigint) as gpus,
        gpu_type,
        alloc_tres,
        source_ref,
        source_row,
        _load_id as load_id
    from ranked
    where newest = 1

)

select * from final
