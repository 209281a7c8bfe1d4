using Microsoft.AspNetCore.Mvc.Testing;
using Microsoft.AspNetCore.TestHost;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The sidecar's own Program, hosted in memory (no port, no process) with the given settings, its own
/// metrics registry and its log collected: for tests where the process boundary is not the point.
/// </summary>
public sealed class InMemorySidecar : WebApplicationFactory<Program>
{
    private readonly IReadOnlyDictionary<string, string?> _settings;

    public InMemorySidecar(params (string Key, string Value)[] settings)
    {
        _settings = settings.ToDictionary(s => s.Key, s => (string?)s.Value);
        Client = CreateClient();
    }

    /// <summary>A client of the in-memory server.</summary>
    public HttpClient Client { get; }

    /// <summary>The registry this instance exports to (never the process-wide default).</summary>
    public CollectorRegistry Registry { get; } = Metrics.NewCustomRegistry();

    /// <summary>Everything logged so far.</summary>
    public CollectingLoggerProvider Log { get; } = new();

    /// <summary>Everything logged so far, as one text (a line per entry).</summary>
    public string LogText => string.Join('\n', Log.Lines.Select(line => line.Text));

    private static readonly (string Key, string Value)[] Fast =
    [
        ("MuxWatch:ProbeInterval", "00:00:00.200"),
        ("MuxWatch:PingInterval", "00:00:00.200"),
        ("MuxWatch:ServerPollInterval", "00:00:00.200"),
        ("MuxWatch:ServerPollTimeout", "00:00:01"),
    ];

    /// <summary>A sidecar probing and polling the given targets every 200 ms (a poll times out after 1 s).</summary>
    public static InMemorySidecar Probing(params (string Name, string ConnectionString)[] targets) => Probing(targets, []);

    /// <summary>The same, with <paramref name="settings"/> besides (a target's <c>TrustedCaFile</c>, say) or instead (a slower <c>ProbeInterval</c>).</summary>
    public static InMemorySidecar Probing((string Name, string ConnectionString)[] targets, (string Key, string Value)[] settings) =>
        new([
            .. settings,
            .. Fast.Where(fast => !settings.Any(given => given.Key == fast.Key)), // a setting given replaces the fast default
            .. targets.SelectMany((t, i) => ((string, string)[])[($"MuxWatch:Targets:{i}:Name", t.Name), ($"MuxWatch:Targets:{i}:ConnectionString", t.ConnectionString)]),
        ]);

    /// <inheritdoc />
    protected override void ConfigureWebHost(IWebHostBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);

        // As the process runs by default: Development would turn a bad request's 400 into a thrown exception.
        builder.UseEnvironment(Microsoft.Extensions.Hosting.Environments.Production);
        foreach (var (key, value) in _settings)
        {
            builder.UseSetting(key, value);
        }

        builder.ConfigureLogging(logging => logging.ClearProviders().AddProvider(Log).SetMinimumLevel(LogLevel.Debug));
        builder.ConfigureTestServices(services => services.AddMuxWatch().UseMetricsRegistry(Registry));
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            Client.Dispose();
        }

        base.Dispose(disposing);
    }
}
