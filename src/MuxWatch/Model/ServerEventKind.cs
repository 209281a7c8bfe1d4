
namespace MuxWatch.Model;

/// <summary>What a Redis server did that can stall its clients: a fixed vocabulary, kebab-case in JSON.</summary>
public enum ServerEventKind
{
    /// <summary>A BGSAVE (RDB snapshot) ran: <c>rdb_bgsave_in_progress</c>, or <c>rdb_saves</c> / <c>rdb_last_save_time</c> between polls.</summary>
    Bgsave,

    /// <summary>An AOF rewrite ran: <c>aof_rewrite_in_progress</c>, or <c>aof_rewrites</c> between polls.</summary>
    AofRewrite,

    /// <summary>A module's fork ran: <c>module_fork_in_progress</c>.</summary>
    ModuleFork,

    /// <summary>The fork() call itself, which blocks the server: from <c>LATENCY HISTORY fork</c>, else from <c>total_forks</c> / <c>latest_fork_usec</c>.</summary>
    Fork,

    /// <summary>A command slower than <c>slowlog-log-slower-than</c>, from <c>SLOWLOG GET</c>.</summary>
    SlowCommand,

    /// <summary>The server restarted: a new <c>run_id</c>, or its uptime went back.</summary>
    Restart,

    /// <summary>The server was loading its dataset (<c>loading:1</c>) and refused commands.</summary>
    Loading,

    /// <summary>The server's role changed (<c>INFO replication</c> <c>role</c>): a replica promoted (a failover) or a primary demoted.</summary>
    RoleChange,

    /// <summary>A replica's link to its primary was down (<c>master_link_status:down</c>).</summary>
    ReplicationLinkDown,

    /// <summary>A replica synchronized from its primary (<c>master_sync_in_progress:1</c>): a full resync, whose RDB the primary forked for.</summary>
    FullSync,

    /// <summary>The cluster was down as the node saw it (<c>CLUSTER INFO</c> <c>cluster_state:fail</c>): it refused commands (<c>CLUSTERDOWN</c>).</summary>
    ClusterFail,

    /// <summary>
    /// MuxWatch's own connection to the server (a plain socket on a dedicated thread, beside the app's) got no
    /// answer: a PING on it went unanswered for longer than the endpoint's usual round trip. The second
    /// witness of a stall that the server itself does not record (a paused host, swapping, CPU steal).
    /// </summary>
    Silence,

    /// <summary>MuxWatch's own connection could not reach the server: refused, reset or closed (the server went away).</summary>
    Unreachable,
}
