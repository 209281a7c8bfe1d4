using System.Globalization;

namespace MuxWatch.Testing;

/// <summary>
/// A primary, its replica, and three Sentinels watching them as the service <see cref="ServiceName"/>,
/// all real processes on free loopback ports (<c>redis-server --sentinel</c>, what Debian's
/// <c>redis-sentinel</c> runs).
/// </summary>
public sealed class RedisSentinels : IAsyncDisposable
{
    /// <summary>The monitored service's name.</summary>
    public const string ServiceName = "muxwatch-test";

    private readonly List<ExternalProcess> _sentinels = [];
    private readonly string _directory = Directory.CreateTempSubdirectory("muxwatch-sentinel-").FullName;

    private RedisSentinels(RedisServer primary, RedisServer replica)
    {
        Primary = primary;
        Replica = replica;
    }

    /// <summary>The primary at start.</summary>
    public RedisServer Primary { get; }

    /// <summary>Its replica at start.</summary>
    public RedisServer Replica { get; }

    /// <summary>The Sentinels' ports.</summary>
    public IReadOnlyList<int> SentinelPorts { get; private set; } = [];

    /// <summary>A configuration string naming the Sentinels and the service: the client finds the primary through them.</summary>
    public string ConfigurationString => string.Join(',', SentinelPorts.Select(p => $"127.0.0.1:{p}")) + $",serviceName={ServiceName}";

    /// <summary>Starts the primary, the replica and three Sentinels, and waits until the Sentinels know all of them.</summary>
    public static async Task<RedisSentinels> StartAsync()
    {
        var primary = await RedisServer.StartAsync().ConfigureAwait(false);
        var replica = await RedisServer.StartAsync("--replicaof", "127.0.0.1", primary.Port.ToString(CultureInfo.InvariantCulture)).ConfigureAwait(false);
        var set = new RedisSentinels(primary, replica);
        try
        {
            var ports = new List<int>();
            for (var i = 0; i < 3; i++)
            {
                var port = FreePort.Next();
                var config = Path.Combine(set._directory, $"sentinel-{port}.conf");
                await File.WriteAllTextAsync(config, string.Create(CultureInfo.InvariantCulture, $"""
                    port {port}
                    bind 127.0.0.1
                    dir {set._directory}
                    sentinel monitor {ServiceName} 127.0.0.1 {primary.Port} 2
                    sentinel down-after-milliseconds {ServiceName} 1000
                    sentinel failover-timeout {ServiceName} 5000
                    sentinel parallel-syncs {ServiceName} 1

                    """)).ConfigureAwait(false);
                set._sentinels.Add(ExternalProcess.Start("redis-server", config, "--sentinel"));
                ports.Add(port);
            }

            set.SentinelPorts = ports;
            await Eventually.UntilAsync(async () =>
            {
                foreach (var port in ports)
                {
                    var status = await SentinelAsync(port, "SENTINEL", "MASTER", ServiceName).ConfigureAwait(false);
                    if (!status.Contains("num-slaves\n1", StringComparison.Ordinal) || !status.Contains("num-other-sentinels\n2", StringComparison.Ordinal))
                    {
                        return false;
                    }
                }

                return true;
            }, "three Sentinels knowing the primary, its replica and each other", TimeSpan.FromSeconds(60)).ConfigureAwait(false);
            return set;
        }
        catch
        {
            await set.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Runs a command on the Sentinel at <paramref name="port"/> through <c>redis-cli</c>.</summary>
    public static async Task<string> SentinelAsync(int port, params string[] arguments)
    {
        var info = new System.Diagnostics.ProcessStartInfo("redis-cli") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        foreach (var argument in (string[])["-h", "127.0.0.1", "-p", port.ToString(CultureInfo.InvariantCulture), .. arguments])
        {
            info.ArgumentList.Add(argument);
        }

        var (_, output, _) = await BuiltProgram.RunAsync(info).ConfigureAwait(false);
        return output.Trim();
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        foreach (var sentinel in _sentinels)
        {
            await sentinel.DisposeAsync().ConfigureAwait(false);
        }

        await Replica.DisposeAsync().ConfigureAwait(false);
        await Primary.DisposeAsync().ConfigureAwait(false);
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
