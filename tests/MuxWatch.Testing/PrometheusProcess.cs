namespace MuxWatch.Testing;

/// <summary>
/// Debian's Prometheus as a process on a free loopback port, scraping one target every second (and
/// evaluating rules every second, when given), with its storage in a folder of its own; ready when
/// returned, stopped and removed on dispose.
/// </summary>
public sealed class PrometheusProcess : IAsyncDisposable
{
    private readonly ExternalProcess _process;
    private readonly HttpClient _client;
    private readonly string _work;

    private PrometheusProcess(ExternalProcess process, HttpClient client, string work)
    {
        _process = process;
        _client = client;
        _work = work;
        Api = new PrometheusApi(client);
    }

    /// <summary>Its base address, <c>http://127.0.0.1:port</c>.</summary>
    public Uri Address => _client.BaseAddress!;

    /// <summary>Its HTTP API.</summary>
    public PrometheusApi Api { get; }

    /// <summary>What it wrote to stdout and stderr so far.</summary>
    public string Output => _process.Output;

    /// <summary>Starts Prometheus scraping <paramref name="target"/> (<c>host:port</c>) as job <paramref name="job"/>.</summary>
    /// <param name="target">What to scrape, <c>host:port</c> (its <c>/metrics</c>).</param>
    /// <param name="job">The scrape job's name.</param>
    /// <param name="rules">A rule file to load, or null.</param>
    /// <param name="alertmanager">An Alertmanager's <c>host:port</c> to send alerts to, or null.</param>
    public static Task<PrometheusProcess> StartAsync(string target, string job = "muxwatch", string? rules = null, string? alertmanager = null) =>
        StartAsync([target], job, rules, alertmanager);

    /// <summary>Starts Prometheus scraping every one of <paramref name="targets"/> (<c>host:port</c>, each its own <c>instance</c>) as job <paramref name="job"/>.</summary>
    /// <param name="targets">What to scrape, <c>host:port</c> (their <c>/metrics</c>); a target not up yet is scraped once it is.</param>
    /// <param name="job">The scrape job's name.</param>
    /// <param name="rules">A rule file to load, or null.</param>
    /// <param name="alertmanager">An Alertmanager's <c>host:port</c> to send alerts to, or null.</param>
    public static async Task<PrometheusProcess> StartAsync(IReadOnlyList<string> targets, string job = "muxwatch", string? rules = null, string? alertmanager = null)
    {
        var work = Directory.CreateTempSubdirectory("muxwatch-prometheus-").FullName;
        var port = FreePort.Next();
        var config = Path.Combine(work, "prometheus.yml");
        var ruleFiles = rules is null ? string.Empty : $"rule_files: [\"{rules}\"]\n";
        var alerting = alertmanager is null ? string.Empty : $"alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [\"{alertmanager}\"]\n";
        await File.WriteAllTextAsync(config,
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n" + ruleFiles + alerting
            + $"scrape_configs:\n  - job_name: {job}\n    static_configs:\n      - targets: [{string.Join(", ", targets.Select(t => $"\"{t}\""))}]\n").ConfigureAwait(false);
        var process = ExternalProcess.Start("prometheus",
            $"--config.file={config}", $"--storage.tsdb.path={Path.Combine(work, "tsdb")}", $"--web.listen-address=127.0.0.1:{port}");
        var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };
        var prometheus = new PrometheusProcess(process, client, work);
        try
        {
            await Eventually.UntilAsync(async () => (await client.GetAsync(new Uri("/-/ready", UriKind.Relative)).ConfigureAwait(false)).IsSuccessStatusCode,
                "Prometheus to be ready: " + process.Output).ConfigureAwait(false);
            return prometheus;
        }
        catch
        {
            await prometheus.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        await _process.DisposeAsync().ConfigureAwait(false);
        _client.Dispose();
        try
        {
            Directory.Delete(_work, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
