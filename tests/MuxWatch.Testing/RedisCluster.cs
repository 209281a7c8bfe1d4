using System.Diagnostics;
using System.Globalization;

namespace MuxWatch.Testing;

/// <summary>
/// A real Redis Cluster on loopback: three primaries and three replicas (or more, half of each), Debian's <c>redis-server</c>
/// with <c>--cluster-enabled yes</c>, formed by <c>redis-cli --cluster create --cluster-replicas 1</c>.
/// Each node's bus port is a free port of its own (<c>--cluster-port</c>, Redis 7), not port + 10000,
/// which may lie beyond 65535 for the ports the system hands out.
/// </summary>
public sealed class RedisCluster : IAsyncDisposable
{
    private readonly List<RedisServer> _added = [];

    private RedisCluster(IReadOnlyList<RedisServer> nodes) => Nodes = nodes;

    /// <summary>The nodes; which are primaries is the cluster's choice (see <see cref="RoleOfAsync"/>).</summary>
    public IReadOnlyList<RedisServer> Nodes { get; }

    /// <summary>A configuration string naming one node: the client discovers the rest.</summary>
    public string Seed => Nodes[0].EndPoint;

    /// <summary>Starts six nodes, forms the cluster and waits until every node says <c>cluster_state:ok</c>.</summary>
    public static Task<RedisCluster> StartAsync() => StartAsync(6);

    /// <summary>
    /// Starts <paramref name="count"/> nodes (an even number), half primaries and half replicas, forms the
    /// cluster and waits until every node says <c>cluster_state:ok</c> and knows every other.
    /// </summary>
    public static async Task<RedisCluster> StartAsync(int count)
    {
        if (count < 6 || count % 2 != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(count), count, "an even number of nodes, at least six");
        }

        var nodes = new List<RedisServer>();
        try
        {
            for (var i = 0; i < count; i++)
            {
                nodes.Add(await StartNodeAsync().ConfigureAwait(false));
            }

            await RedisCliClusterAsync(["create", .. nodes.Select(n => n.EndPoint), "--cluster-replicas", "1", "--cluster-yes"]).ConfigureAwait(false);

            var cluster = new RedisCluster(nodes);
            await Eventually.UntilAsync(async () =>
            {
                foreach (var node in nodes)
                {
                    if (!(await node.CommandAsync("CLUSTER", "INFO").ConfigureAwait(false)).Contains("cluster_state:ok", StringComparison.Ordinal)
                        || !AgreesOnAll(await node.CommandAsync("CLUSTER", "NODES").ConfigureAwait(false), count))
                    {
                        return false;
                    }
                }

                return true;
            }, $"every node of the cluster to say cluster_state:ok and to know all {count} nodes, half primaries and half replicas", TimeSpan.FromSeconds(60 + count)).ConfigureAwait(false);
            return cluster;
        }
        catch
        {
            foreach (var node in nodes)
            {
                await node.DisposeAsync().ConfigureAwait(false);
            }

            throw;
        }
    }

    /// <summary>
    /// Starts a seventh node and adds it to the cluster as an empty primary (<c>redis-cli --cluster
    /// add-node</c>); returns once every node lists it. Stopped with the cluster.
    /// </summary>
    public async Task<RedisServer> AddNodeAsync()
    {
        var node = await StartNodeAsync().ConfigureAwait(false);
        _added.Add(node);
        await RedisCliClusterAsync(["add-node", node.EndPoint, Seed]).ConfigureAwait(false);
        await Eventually.UntilAsync(async () =>
        {
            foreach (var member in Nodes.Append(node))
            {
                if (!Lists(await member.CommandAsync("CLUSTER", "NODES").ConfigureAwait(false), node.EndPoint))
                {
                    return false;
                }
            }

            return true;
        }, $"every node to list the added node {node.EndPoint}", TimeSpan.FromSeconds(60)).ConfigureAwait(false);
        return node;
    }

    /// <summary>
    /// Removes <paramref name="node"/> (a replica, or a primary without slots) from the cluster (<c>redis-cli
    /// --cluster del-node</c>: the others forget it, it is reset and keeps running alone); returns once no
    /// other node lists it.
    /// </summary>
    public async Task RemoveNodeAsync(RedisServer node)
    {
        ArgumentNullException.ThrowIfNull(node);
        var id = (await node.CommandAsync("CLUSTER", "MYID").ConfigureAwait(false)).Trim();
        await RedisCliClusterAsync(["del-node", Seed, id]).ConfigureAwait(false);
        await Eventually.UntilAsync(async () =>
        {
            foreach (var member in Nodes.Concat(_added).Where(n => n != node))
            {
                if (Lists(await member.CommandAsync("CLUSTER", "NODES").ConfigureAwait(false), node.EndPoint))
                {
                    return false;
                }
            }

            return true;
        }, $"no node to list the removed node {node.EndPoint}", TimeSpan.FromSeconds(60)).ConfigureAwait(false);
    }

    /// <summary>A cluster node on free ports; again on others when it exits before answering (its bus port taken before it bound it, three tries).</summary>
    private static async Task<RedisServer> StartNodeAsync()
    {
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                return await RedisServer.StartAsync(
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
                    "--cluster-port", FreePort.Next().ToString(CultureInfo.InvariantCulture)).ConfigureAwait(false);
            }
            catch (RedisServer.ExitedEarlyException) when (attempt < 3)
            {
            }
        }
    }

    private static bool Lists(string clusterNodes, string endpoint) =>
        clusterNodes.Split('\n').Any(line => line.Split(' ') is { Length: > 2 } fields && fields[1].StartsWith(endpoint + "@", StringComparison.Ordinal));

    private static async Task RedisCliClusterAsync(string[] arguments)
    {
        var cli = new ProcessStartInfo("redis-cli") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        foreach (var argument in (string[])["--cluster", .. arguments])
        {
            cli.ArgumentList.Add(argument);
        }

        var (exitCode, output, error) = await BuiltProgram.RunAsync(cli, timeout: TimeSpan.FromMinutes(1)).ConfigureAwait(false);
        if (exitCode != 0)
        {
            throw new InvalidOperationException($"redis-cli --cluster {arguments[0]} failed ({exitCode}): {output}{error}");
        }
    }

    /// <summary>A node's <c>CLUSTER NODES</c> lists every node, none still in handshake, half primaries each with a replica: gossip has settled.</summary>
    private static bool AgreesOnAll(string nodes, int count)
    {
        var lines = nodes.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        var flags = lines.Select(l => l.Split(' ')).Where(f => f.Length > 2).Select(f => f[2]).ToList();
        return flags.Count == count
            && !flags.Any(f => f.Contains("handshake", StringComparison.Ordinal) || f.Contains("noaddr", StringComparison.Ordinal) || f.Contains("fail", StringComparison.Ordinal))
            && flags.Count(f => f.Contains("master", StringComparison.Ordinal)) == count / 2
            && flags.Count(f => f.Contains("slave", StringComparison.Ordinal)) == count / 2;
    }

    /// <summary><c>master</c> or <c>slave</c>, as <c>INFO replication</c> says.</summary>
    public static async Task<string> RoleOfAsync(RedisServer node)
    {
        ArgumentNullException.ThrowIfNull(node);
        var info = await node.CommandAsync("INFO", "replication").ConfigureAwait(false);
        var line = info.Split('\n').First(l => l.StartsWith("role:", StringComparison.Ordinal));
        return line["role:".Length..].Trim();
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        foreach (var node in Nodes.Concat(_added))
        {
            await node.DisposeAsync().ConfigureAwait(false);
        }
    }
}
