using Prometheus;

namespace MuxWatch.Export;

/// <content>The replication families, from each polled endpoint's <c>INFO replication</c>.</content>
public sealed partial class MuxWatchMetrics
{
    /// <summary>The most replicas of one primary given a <c>replica</c> label; more are not exported.</summary>
    internal const int MaxReplicasPerPrimary = 16;

    /// <summary>1 for the endpoint's current role (<c>primary</c> or <c>replica</c>); the other role's series is removed.</summary>
    internal Gauge ServerRole { get; private set; } = null!;

    /// <summary>Role changes seen (a replica promoted, a primary demoted).</summary>
    internal Counter ServerRoleChanges { get; private set; } = null!;

    /// <summary>A replica's link to its primary: 1 up, 0 down.</summary>
    internal Gauge ServerReplicationLinkUp { get; private set; } = null!;

    /// <summary>1 while a replica synchronizes from its primary.</summary>
    internal Gauge ServerReplicationSyncInProgress { get; private set; } = null!;

    /// <summary>Seconds since a replica last heard from its primary.</summary>
    internal Gauge ServerReplicationLastIo { get; private set; } = null!;

    /// <summary>A primary's connected replicas.</summary>
    internal Gauge ServerConnectedReplicas { get; private set; } = null!;

    /// <summary>How far each replica is behind its primary, in bytes of the replication stream.</summary>
    internal Gauge ServerReplicaLagBytes { get; private set; } = null!;

    /// <summary>Seconds since each replica last acknowledged its primary.</summary>
    internal Gauge ServerReplicaAckAge { get; private set; } = null!;

    /// <summary>A cluster node's view of the cluster: 1 ok, 0 fail (<c>CLUSTER INFO</c> <c>cluster_state</c>).</summary>
    internal Gauge ServerClusterStateOk { get; private set; } = null!;

    /// <summary>Hash slots the node sees as failed.</summary>
    internal Gauge ServerClusterSlotsFail { get; private set; } = null!;

    /// <summary>Hash slots the node sees as possibly failed.</summary>
    internal Gauge ServerClusterSlotsPfail { get; private set; } = null!;

    /// <summary>Nodes the node knows of.</summary>
    internal Gauge ServerClusterKnownNodes { get; private set; } = null!;

    private void DeclareReplicationFamilies()
    {
        ServerClusterStateOk = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_cluster_state_ok",
            "A cluster node's view of the cluster: 1 ok, 0 fail, when it refuses commands with CLUSTERDOWN (CLUSTER INFO cluster_state).", "endpoint");
        ServerClusterSlotsFail = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_cluster_slots_fail",
            "Hash slots the node sees served by a failed node (cluster_slots_fail).", "endpoint");
        ServerClusterSlotsPfail = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_cluster_slots_pfail",
            "Hash slots the node sees served by a node possibly failed, not yet agreed (cluster_slots_pfail).", "endpoint");
        ServerClusterKnownNodes = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_cluster_known_nodes",
            "Nodes the node knows of, itself included (cluster_known_nodes).", "endpoint");
        ServerRole = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_role",
            "1 for the endpoint's current role, primary or replica (INFO replication role); the other role's series is removed.", "endpoint", "role");
        ServerRoleChanges = Counter(SeriesOwner.PolledEndpoint, "muxwatch_server_role_changes_total",
            "Role changes seen on the endpoint: a replica promoted (a failover) or a primary demoted.", "endpoint");
        ServerReplicationLinkUp = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_replication_link_up",
            "A replica's link to its primary: 1 up, 0 down (master_link_status).", "endpoint");
        ServerReplicationSyncInProgress = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_replication_sync_in_progress",
            "1 while a replica synchronizes from its primary, a full resync (master_sync_in_progress).", "endpoint");
        ServerReplicationLastIo = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_replication_last_io_seconds",
            "Seconds since a replica last heard from its primary (master_last_io_seconds_ago).", "endpoint");
        ServerConnectedReplicas = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_connected_replicas",
            "Replicas connected to a primary (connected_slaves).", "endpoint");
        ServerReplicaLagBytes = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_replica_lag_bytes",
            "How far each replica of a primary is behind, in bytes (master_repl_offset minus the replica's offset).", "endpoint", "replica");
        ServerReplicaAckAge = Gauge(SeriesOwner.PolledEndpoint, "muxwatch_server_replica_ack_age_seconds",
            "Seconds since each replica of a primary last acknowledged it (its lag= in INFO replication).", "endpoint", "replica");
    }

    /// <summary>Removes the lag series of a replica its primary no longer lists.</summary>
    internal void RemoveReplicaSeries(string endpoint, string replica)
    {
        lock (SeriesGate)
        {
            ServerReplicaLagBytes.RemoveLabelled(endpoint, replica);
            ServerReplicaAckAge.RemoveLabelled(endpoint, replica);
        }
    }

    /// <summary>Removes the series of the role an endpoint no longer has (a replica's link figures once it is a primary, and back).</summary>
    internal void RemoveRoleSeries(string endpoint, bool nowPrimary)
    {
        lock (SeriesGate)
        {
            ServerRole.RemoveLabelled(endpoint, nowPrimary ? "replica" : "primary");
            if (nowPrimary)
            {
                ServerReplicationLinkUp.RemoveLabelled(endpoint);
                ServerReplicationSyncInProgress.RemoveLabelled(endpoint);
                ServerReplicationLastIo.RemoveLabelled(endpoint);
            }
            else
            {
                ServerConnectedReplicas.RemoveLabelled(endpoint);
                RemoveWhere(ServerReplicaLagBytes, endpoint);
                RemoveWhere(ServerReplicaAckAge, endpoint);
            }
        }
    }
}
