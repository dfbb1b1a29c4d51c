{#-
    AWS's own allocation of its EC2 instances to EKS pods (CUR 2.0 split cost allocation data), per UTC day,
    parent instance (the node: the instance id our bill and telemetry know it by), billing currency, namespace and
    pod, plus one `unused` row per instance and day: the capacity view, in which the pods' split cost and the
    instance's unused cost add up to the instance's amortized cost.

    Why each rule is what it is:
    - A split row is a CUR line with split_line_item_parent_resource_id set. A pod's row names the pod in
      line_item_resource_id, `arn:aws:eks:<region>:<account>:pod/<cluster>/<namespace>/<pod>/<uid>` (the spelling
      AWS's and CID's queries split on); the EKS cost allocation tags (`aws:eks:cluster-name`, `aws:eks:namespace`,
      under the CUR 2.0 map key `aws_eks_namespace` as the loader keys them) fill cluster and namespace when the
      id is not such an ARN. ECS task rows (`…:task/…`) are not Kubernetes and are left out.
    - Any other split row of the instance is its explicit unused row: all it holds (split and unused cost) is
      unused capacity. Its exact form is not in AWS's column reference (issue 38 names it); a delivery without one
      still has the unused cost, on the pod rows as their pod-view share.
    - Capacity view, never both views: pods contribute split_cost only; the instance's unused cost is its unused
      row where the hour has one, else the sum of the pod rows' unused_cost (their pod-view shares). So no hour's
      unused cost is counted twice, and split + unused = the instance's amortized cost either way. The pod-view
      share stays visible on each pod row (pod_unused_cost) and is never added to allocated_cost.
    - Amounts are the net (after-discount) columns where AWS reports them, else the gross ones, as the cost lines
      take the net columns (int_aws__cur_cost_lines), so this compares with the bill on one basis.
    - GPU split usage: the rows whose usage type names GPUs (`…GPU…`; the exact spelling AWS uses for accelerated
      split rows is not verified here), their split usage (the larger of reserved and actual GPUs × hours).
-#}

{%- set pod_arn_pattern = 'arn:%:eks:%:pod/%' -%}
{%- set task_arn_pattern = 'arn:%:ecs:%:task/%' -%}

with

split_rows as (

    select
        cast({{ dbt.date_trunc('day', 'line_item_usage_start_date') }} as date) as usage_date,
        line_item_usage_start_date as hour_start,
        bill_payer_account_id as billing_account_id,
        line_item_usage_account_id as sub_account_id,
        split_line_item_parent_resource_id as resource_id,
        line_item_currency_code as billing_currency,
        line_item_resource_id like '{{ pod_arn_pattern }}' as is_pod,
        case when line_item_resource_id like '{{ pod_arn_pattern }}' then
            {{ dbt.split_part('line_item_resource_id', "'/'", 2) }}
        end as arn_cluster_name,
        case when line_item_resource_id like '{{ pod_arn_pattern }}' then
            {{ dbt.split_part('line_item_resource_id', "'/'", 3) }}
        end as arn_namespace,
        case when line_item_resource_id like '{{ pod_arn_pattern }}' then
            {{ dbt.split_part('line_item_resource_id', "'/'", 4) }}
        end as pod,
        {{ json_extract_string('resource_tags', 'aws_eks_cluster_name') }} as tag_cluster_name,
        {{ json_extract_string('resource_tags', 'aws_eks_namespace') }} as tag_namespace,
        coalesce(split_line_item_net_split_cost, split_line_item_split_cost, 0) as split_cost,
        coalesce(split_line_item_net_unused_cost, split_line_item_unused_cost, 0) as unused_cost,
        coalesce(split_line_item_public_on_demand_split_cost, 0)
            + case when line_item_resource_id like '{{ pod_arn_pattern }}' then 0
                else coalesce(split_line_item_public_on_demand_unused_cost, 0) end as public_on_demand_cost,
        case when upper(line_item_usage_type) like '%GPU%' then split_line_item_split_usage end as gpu_split_usage
    from {{ ref('stg_aws__cur_line_items') }}
    where split_line_item_parent_resource_id is not null
        and (line_item_resource_id is null or line_item_resource_id not like '{{ task_arn_pattern }}')

),

-- the hours of each instance that carry an explicit unused row
unused_row_hours as (

    select distinct resource_id, billing_currency, hour_start
    from split_rows
    where not is_pod

),

pods as (

    select
        usage_date,
        resource_id,
        billing_currency,
        max(billing_account_id) as billing_account_id,
        max(sub_account_id) as sub_account_id,
        max(coalesce(arn_cluster_name, tag_cluster_name)) as cluster_name,
        coalesce(arn_namespace, tag_namespace) as namespace,
        pod,
        sum(split_cost) as allocated_cost,
        sum(unused_cost) as pod_unused_cost,
        sum(public_on_demand_cost) as public_on_demand_cost,
        sum(gpu_split_usage) as gpu_split_usage,
        count(*) as split_line_count
    from split_rows
    where is_pod
    group by usage_date, resource_id, billing_currency, coalesce(arn_namespace, tag_namespace), pod

),

-- the instance's unused cost per day: its unused rows, and the pods' unused shares of the hours without one
unused as (

    select
        split_rows.usage_date,
        split_rows.resource_id,
        split_rows.billing_currency,
        max(split_rows.billing_account_id) as billing_account_id,
        max(split_rows.sub_account_id) as sub_account_id,
        max(coalesce(split_rows.arn_cluster_name, split_rows.tag_cluster_name)) as cluster_name,
        sum(
            case
                when not split_rows.is_pod then split_rows.split_cost + split_rows.unused_cost
                when unused_row_hours.hour_start is null then split_rows.unused_cost
                else 0
            end
        ) as allocated_cost,
        sum(case when not split_rows.is_pod then split_rows.public_on_demand_cost else 0 end) as public_on_demand_cost,
        sum(case when not split_rows.is_pod then 1 else 0 end) as split_line_count
    from split_rows
    left join unused_row_hours
        on split_rows.resource_id = unused_row_hours.resource_id
        and split_rows.billing_currency = unused_row_hours.billing_currency
        and split_rows.hour_start = unused_row_hours.hour_start
    group by split_rows.usage_date, split_rows.resource_id, split_rows.billing_currency

),

unioned as (

    select
        usage_date,
        resource_id,
        billing_currency,
        billing_account_id,
        sub_account_id,
        cluster_name,
        'pod' as allocation_type,
        namespace,
        pod,
        cast(allocated_cost as decimal(38, 12)) as allocated_cost,
        cast(pod_unused_cost as decimal(38, 12)) as pod_unused_cost,
        cast(public_on_demand_cost as decimal(38, 12)) as public_on_demand_cost,
        cast(gpu_split_usage as decimal(38, 12)) as gpu_split_usage,
        cast(split_line_count as bigint) as split_line_count
    from pods
    union all
    select
        usage_date,
        resource_id,
        billing_currency,
        billing_account_id,
        sub_account_id,
        cluster_name,
        'unused' as allocation_type,
        cast(null as {{ dbt.type_string() }}) as namespace,
        cast(null as {{ dbt.type_string() }}) as pod,
        cast(allocated_cost as decimal(38, 12)) as allocated_cost,
        cast(null as decimal(38, 12)) as pod_unused_cost,
        cast(public_on_demand_cost as decimal(38, 12)) as public_on_demand_cost,
        cast(null as decimal(38, 12)) as gpu_split_usage,
        cast(split_line_count as bigint) as split_line_count
    from unused

)

select * from unioned
