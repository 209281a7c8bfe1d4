using System.Diagnostics;
using System.Text.Json;
using System.Text.RegularExpressions;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// The dashboards: their structure against Grafana's own types, and every panel, annotation and
/// variable query run against a real Prometheus, with template variables substituted as Grafana does.
/// </summary>
/// <remarks>
/// This Prometheus holds synthetic series of the whole metric contract (docs/metrics.md), written into
/// its storage with <c>promtool tsdb create-blocks-from openmetrics</c>, so that every panel is checked,
/// including those whose source a test cannot provoke. <see cref="EndToEndTests"/> runs the same queries
/// against a Prometheus that scraped the real service.
/// </remarks>
public sealed partial class DashboardTests : IAsyncLifetime
{
    private static readonly string Dashboards = Path.Combine(BuiltProgram.RepositoryRoot, "dashboards");
    private static readonly TimeSpan Step = TimeSpan.FromSeconds(15);
    private readonly string _work = Directory.CreateTempSubdirectory("muxwatch-prometheus-").FullName;
    private readonly DateTimeOffset _end = DateTimeOffset.FromUnixTimeSeconds(DateTimeOffset.UtcNow.ToUnixTimeSeconds() / 60 * 60).AddMinutes(-10);
    private Process? _prometheus;
    private HttpClient _client = null!;

    private DateTimeOffset Start => _end.AddHours(-1);

    public async Task InitializeAsync()
    {
        var data = Path.Combine(_work, "contract.om");
        await File.WriteAllTextAsync(data, ContractSeries.OpenMetrics(Start, _end, Step));
        var storage = Path.Combine(_work, "tsdb");
        await RunAsync("promtool", "tsdb", "create-blocks-from", "openmetrics", data, storage);

        var config = Path.Combine(_work, "prometheus.yml");
        await File.WriteAllTextAsync(config, "global:\n  scrape_interval: 15s\nscrape_configs: []\n");
        var port = FreePort.Next();
        var info = new ProcessStartInfo("prometheus") { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in (string[])[$"--config.file={config}", $"--storage.tsdb.path={storage}", $"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=30d"])
        {
            info.ArgumentList.Add(argument);
        }

        _prometheus = Process.Start(info)!;
        _prometheus.OutputDataReceived += (_, _) => { };
        _prometheus.ErrorDataReceived += (_, _) => { };
        _prometheus.BeginOutputReadLine();
        _prometheus.BeginErrorReadLine();
        _client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };
        await Eventually.UntilAsync(async () => (await _client.GetAsync(new Uri("/-/ready", UriKind.Relative))).IsSuccessStatusCode, "Prometheus to be ready");
        await Eventually.UntilAsync(async () => (await QueryRangeAsync("muxwatch_connected")).GetArrayLength() > 0, "Prometheus to load the contract series");
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        if (_prometheus is { HasExited: false })
        {
            _prometheus.Kill(entireProcessTree: true);
            await _prometheus.WaitForExitAsync();
        }

        _prometheus?.Dispose();
        Directory.Delete(_work, recursive: true);
    }

    public static TheoryData<string> DashboardFiles() =>
        new(Directory.EnumerateFiles(Dashboards, "*.json").Select(Path.GetFileName).Order()!);

    [Fact]
    public async Task Every_dashboard_matches_the_grafana_schema_types()
    {
        var (exitCode, output, error) = await BuiltProgram.RunAsync(
            new ProcessStartInfo("node") { ArgumentList = { Path.Combine(Dashboards, "schema-check", "check.mjs") }, RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true });

        Assert.True(exitCode == 0, output + error);
        Assert.Contains("match @grafana/schema's Dashboard type", output, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(DashboardFiles))]
    public async Task Every_query_of_the_dashboard_parses_and_returns_data(string file)
    {
        using var document = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(Dashboards, file)));
        var root = document.RootElement;
        foreach (var panel in DashboardQueries.Panels(root))
        {
            Assert.True(panel.TryGetProperty("description", out var description) && description.GetString()!.Length > 10, $"{file}: panel '{panel.GetProperty("title")}' has no description");
            if (panel.TryGetProperty("targets", out _))
            {
                Assert.True(panel.GetProperty("fieldConfig").GetProperty("defaults").TryGetProperty("unit", out _), $"{file}: panel '{panel.GetProperty("title")}' has no unit");
            }
        }

        var outcomes = await new DashboardQueries(new PrometheusApi(_client), Start, _end, Step, "1m").RunAsync(root);

        Assert.True(outcomes.Count > 5, $"{file}: only {outcomes.Count} queries found");
        var empty = outcomes.Where(o => !o.HasData).Select(o => $"{o.Source}: no data for {o.Expr}").ToList();
        Assert.True(empty.Count == 0, string.Join("\n", empty));
    }

    /// <summary>Every variable a dashboard uses is defined, and the variables of the contract are present.</summary>
    [Theory]
    [MemberData(nameof(DashboardFiles))]
    public async Task Every_variable_used_is_defined(string file)
    {
        var text = await File.ReadAllTextAsync(Path.Combine(Dashboards, file));
        using var document = JsonDocument.Parse(text);
        var defined = document.RootElement.GetProperty("templating").GetProperty("list").EnumerateArray()
            .Select(v => v.GetProperty("name").GetString()!).ToHashSet();

        Assert.Superset(new HashSet<string> { "datasource", "instance", "multiplexer", "endpoint" }, defined);
        foreach (Match used in DashboardQueries.VariableUse().Matches(text))
        {
            var name = used.Groups["name"].Value;
            Assert.True(defined.Contains(name) || name.StartsWith("__", StringComparison.Ordinal), $"{file} uses ${name}, which it does not define");
        }
    }

    private async Task<JsonElement> QueryRangeAsync(string expr) => await new PrometheusApi(_client).QueryRangeAsync(expr, Start, _end, Step);

    private static async Task RunAsync(string program, params string[] arguments)
    {
        var info = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);
        Assert.True(exitCode == 0, $"{program} {string.Join(' ', arguments)}: {output}{error}");
    }

}
