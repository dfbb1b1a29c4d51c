{#-
    Training runs with the GPU-hours they held, one row per run and source (docs/ai-workloads.md "Training runs"):

    - slurm: a job allocation that held GPUs (gpus > 0, elapsed > 0): GPU-hours = gpus × ElapsedRaw ÷ 3,600.
      Provider and GPU model from seed slurm_partitions (cluster, else any cluster, and partition), else the typed
      gres (`gres/gpu:h100`) and the owned server (onprem_gpu_assets) its first host is.
    - skypilot: a cluster with accelerators: GPU-hours = nodes × accelerators per node × DURATION ÷ 3,600; provider
      from seed skypilot_clouds; SkyPilot's own cost kept beside (reported_cost, USD).
    - kubernetes: pods of a namespace and name pattern in seed kubernetes_training_pods, grouped into a run by the
      row's run name or the Job/PyTorchJob naming conventions; GPU-hours are those the pods held in the chargeback
      (int_gpu_allocation__pod_hourly), provider from the node's bill (fct_gpu_cost_allocation_daily).

    GPU model names are matched to the vocabulary (seed gpu_models, gpu_model_aliases) as everywhere else.
-#}

{%- set job_suffix = "[bcdfghjklmnpqrstvwxz2456789]{5}" -%}

with

gpu_model_names as (

    {{ gpu_model_lookup() }}

),

owned_servers as (

    select
        hostname,
        {{ dbt.split_part('hostname', "'.'", 1) }} as short_hostname,
        gpu_model
    from {{ ref('int_onprem__gpu_assets') }}
    where hostname is not null

),

partitions as (

    select * from {{ ref('slurm_partitions') }}

),

slurm_jobs as (

    select
        jobs.*,
        {{ dbt.split_part('jobs.hosts', "','", 1) }} as first_host
    from {{ ref('stg_training_jobs__slurm_jobs') }} as jobs
    where jobs.gpus > 0 and jobs.elapsed_seconds > 0 and jobs.started_at is not null

),

slurm_mapped as (

    select
        slurm_jobs.*,
        coalesce(cluster_partition.provider_name, any_partition.provider_name) as partition_provider,
        coalesce(cluster_partition.gpu_model, any_partition.gpu_model) as partition_gpu_model,
        owned_servers.gpu_model as owned_gpu_model,
        owned_servers.hostname is not null as on_owned_server
    from slurm_jobs
    left join partitions as cluster_partition
        on slurm_jobs.cluster = cluster_partition.cluster
        and slurm_jobs.partition = cluster_partition.partition
    left join partitions as any_partition
        on any_partition.cluster is null
        and slurm_jobs.partition = any_partition.partition
    left join owned_servers
        on slurm_jobs.first_host = owned_servers.hostname
        or slurm_jobs.first_host = owned_servers.short_hostname

),

slurm_runs as (

    select
        'slurm' as run_source,
        {{ dbt.concat(["coalesce(" ~ dbt.concat(['slurm_mapped.cluster', "'/'"]) ~ ", '')", 'slurm_mapped.job_id']) }}
            as run_key,
        slurm_mapped.job_name as run_name,
        slurm_mapped.user_name,
        slurm_mapped.account,
        slurm_mapped.account as team,
        slurm_mapped.state,
        slurm_mapped.started_at,
        coalesce(
            slurm_mapped.ended_at,
            {{ dbt.dateadd('second', 'slurm_mapped.elapsed_seconds', 'slurm_mapped.started_at') }}
        ) as ended_at,
        cast(slurm_mapped.gpus as decimal(18, 3)) as gpus,
        {{ decimal_divide('slurm_mapped.gpus * slurm_mapped.elapsed_seconds', '3600', 12) }} as gpu_hours,
        coalesce(slurm_mapped.partition_gpu_model, slurm_mapped.gpu_type, slurm_mapped.owned_gpu_model)
            as gpu_model_as_delivered,
        coalesce(
            slurm_mapped.partition_provider,
            case when slurm_mapped.on_owned_server then 'On-premises' end
        ) as provider_name,
        slurm_mapped.hosts,
        cast(null as {{ dbt.type_string() }}) as instance_type,
        cast(null as decimal(38, 12)) as reported_cost,
        cast(null as {{ dbt.type_string() }}) as reported_cost_currency
    from slurm_mapped

),

skypilot_runs as (

    select
        'skypilot' as run_source,
        {{ dbt.concat(['clusters.cluster_name', "'@'", 'cast(clusters.launched_at as ' ~ dbt.type_string() ~ ')']) }}
            as run_key,
        clusters.cluster_name as run_name,
        cast(null as {{ dbt.type_string() }}) as user_name,
        cast(null as {{ dbt.type_string() }}) as account,
        cast(null as {{ dbt.type_string() }}) as team,
        clusters.status as state,
        clusters.launched_at as started_at,
        {{ dbt.dateadd('second', 'clusters.duration_seconds', 'clusters.launched_at') }} as ended_at,
        cast({{ decimal_product(['clusters.node_count', 'clusters.accelerators_per_node']) }} as decimal(18, 3)) as gpus,
        {{ decimal_divide(
            decimal_product(['clusters.node_count', 'clusters.accelerators_per_node', 'clusters.duration_seconds']),
            '3600',
            12,
        ) }} as gpu_hours,
        clusters.accelerator as gpu_model_as_delivered,
        coalesce(clouds.provider_name, clusters.cloud) as provider_name,
        cast(null as {{ dbt.type_string() }}) as hosts,
        clusters.instance_type,
        clusters.cost as reported_cost,
        case when clusters.cost is not null then clusters.currency end as reported_cost_currency
    from {{ ref('stg_training_jobs__skypilot_clusters') }} as clusters
    left join {{ ref('skypilot_clouds') }} as clouds
        on clusters.cloud = clouds.cloud
    where clusters.accelerators_per_node > 0 and clusters.duration_seconds > 0

),

training_pods as (

    select * from {{ ref('kubernetes_training_pods') }}

),

pod_hours as (

    select * from {{ ref('int_gpu_allocation__pod_hourly') }}

),

-- each pod once, with the longest pattern that matches it
pods as (

    select
        pod_names.namespace,
        pod_names.pod,
        training_pods.run_name as mapped_run_name,
        row_number() over (
            partition by pod_names.namespace, pod_names.pod
            order by length(training_pods.pod_pattern) desc, training_pods.pod_pattern
        ) as best_match
    from (select distinct namespace, pod from pod_hours) as pod_names
    inner join training_pods
        on pod_names.namespace = training_pods.namespace
        and pod_names.pod like training_pods.pod_pattern

),

pod_runs as (

    select
        namespace,
        pod,
        coalesce(
            mapped_run_name,
            {{ regexp_extract_group('pod', '^(.+)-(master|worker|launcher|chief|ps|evaluator)(-[0-9]+)?$', 1) }},
            {{ regexp_extract_group('pod', '^(.+)-[0-9]+-' ~ job_suffix ~ '$', 1) }},
            {{ regexp_extract_group('pod', '^(.+)-' ~ job_suffix ~ '$', 1) }},
            pod
        ) as run_name
    from pods
    where best_match = 1

),

node_providers as (

    select resource_id, max(provider_name) as provider_name
    from {{ ref('fct_gpu_cost_allocation_daily') }}
    group by resource_id

),

run_hours as (

    select
        pod_runs.namespace,
        pod_runs.run_name,
        pod_hours.hour_start,
        pod_hours.gpu_uuid,
        pod_hours.gpu_model,
        pod_hours.host,
        node_providers.provider_name,
        pod_hours.held_gpu_hours
    from pod_hours
    inner join pod_runs
        on pod_hours.namespace = pod_runs.namespace
        and pod_hours.pod = pod_runs.pod
    left join node_providers
        on pod_hours.resource_id = node_providers.resource_id

),

gpus_per_hour as (

    select namespace, run_name, hour_start, count(distinct gpu_uuid) as gpus
    from run_hours
    group by namespace, run_name, hour_start

),

run_hosts as (

    select
        namespace,
        run_name,
        {{ dbt.listagg('host', "','", 'order by host') }} as hosts
    from (select distinct namespace, run_name, host from run_hours) as distinct_hosts
    group by namespace, run_name

),

kubernetes_runs as (

    select
        'kubernetes' as run_source,
        {{ dbt.concat(['run_hours.namespace', "'/'", 'run_hours.run_name']) }} as run_key,
        run_hours.run_name,
        cast(null as {{ dbt.type_string() }}) as user_name,
        run_hours.namespace as account,
        max(namespace_teams.team) as team,
        cast(null as {{ dbt.type_string() }}) as state,
        min(run_hours.hour_start) as started_at,
        {{ dbt.dateadd('hour', 1, 'max(run_hours.hour_start)') }} as ended_at,
        cast(max(peak.gpus) as decimal(18, 3)) as gpus,
        cast(sum(run_hours.held_gpu_hours) as decimal(38, 12)) as gpu_hours,
        max(run_hours.gpu_model) as gpu_model_as_delivered,
        max(run_hours.provider_name) as provider_name,
        max(run_hosts.hosts) as hosts,
        cast(null as {{ dbt.type_string() }}) as instance_type,
        cast(null as decimal(38, 12)) as reported_cost,
        cast(null as {{ dbt.type_string() }}) as reported_cost_currency
    from run_hours
    inner join (
        select namespace, run_name, max(gpus) as gpus from gpus_per_hour group by namespace, run_name
    ) as peak
        on run_hours.namespace = peak.namespace
        and run_hours.run_name = peak.run_name
    left join run_hosts
        on run_hours.namespace = run_hosts.namespace
        and run_hours.run_name = run_hosts.run_name
    left join {{ ref('kubernetes_namespace_teams') }} as namespace_teams
        on run_hours.namespace = namespace_teams.namespace
    group by run_hours.namespace, run_hours.run_name

),

unioned as (

    select * from slurm_runs
    union all
    select * from skypilot_runs
    union all
    select * from kubernetes_runs

),

final as (

    select
        unioned.run_source,
        unioned.run_key,
        unioned.run_name,
        unioned.user_name,
        unioned.account,
        unioned.team,
        unioned.state,
        cast(unioned.started_at as timestamp) as started_at,
        cast(unioned.ended_at as timestamp) as ended_at,
        unioned.gpus,
        cast(unioned.gpu_hours as decimal(38, 12)) as gpu_hours,
        coalesce(gpu_model_names.gpu_model, unioned.gpu_model_as_delivered) as gpu_model,
        unioned.gpu_model_as_delivered,
        unioned.provider_name,
        unioned.hosts,
        unioned.instance_type,
        unioned.reported_cost,
        unioned.reported_cost_currency
    from unioned
    left join gpu_model_names
        on {{ gpu_model_key('unioned.gpu_model_as_delivered') }} = gpu_model_names.gpu_model_key

)

select * from final
