using System.Collections.Concurrent;
using System.Text.Json;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Http;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// Debian's Alertmanager paging a webhook this test process runs, every notification it sends kept: the end of the
/// path the end-to-end tests prove. Started by <see cref="StartAsync"/> with the configuration the caller writes for the
/// webhook's address; Prometheus is pointed at <see cref="Address"/>.
/// </summary>
internal sealed partial class PagingAlertmanager : IAsyncDisposable
{
    private readonly ConcurrentQueue<JsonElement> _notifications = new();
    private WebApplication? _webhook;
    private ExternalProcess? _alertmanager;

    private PagingAlertmanager()
    {
    }

    /// <summary>Alertmanager's host:port, for Prometheus' <c>alertmanagers</c> target.</summary>
    public string Address { get; private set; } = "";

    /// <summary>Every notification received so far, in order.</summary>
    public IReadOnlyCollection<JsonElement> Notifications => _notifications;

    /// <summary>Whether Alertmanager is still running (said in a failing wait's message).</summary>
    public bool IsRunning => _alertmanager is { HasExited: false };

    /// <summary>
    /// Starts the webhook and Alertmanager. <paramref name="configuration"/> is given the webhook's URL and returns
    /// alertmanager.yml; Alertmanager's files go under <paramref name="workDirectory"/>.
    /// </summary>
    public static async Task<PagingAlertmanager> StartAsync(string workDirectory, Func<Uri, string> configuration)
    {
        var pager = new PagingAlertmanager();
        try
        {
            var webhookPort = FreePort.Next();
            var builder = WebApplication.CreateSlimBuilder();
            builder.Logging.ClearProviders();
            builder.WebHost.UseUrls($"http://127.0.0.1:{webhookPort}");
            pager._webhook = builder.Build();
            pager._webhook.MapPost("/page", async (HttpRequest request) =>
            {
                using var document = await JsonDocument.ParseAsync(request.Body);
                pager._notifications.Enqueue(document.RootElement.Clone());
                return Results.Ok();
            });
            await pager._webhook.StartAsync();

            var webhook = new Uri($"http://127.0.0.1:{webhookPort}/page");
            var config = configuration(webhook);
            Assert.Contains(webhook.ToString(), config, StringComparison.Ordinal);
            var configFile = Path.Combine(workDirectory, "alertmanager.yml");
            await File.WriteAllTextAsync(configFile, config);

            var port = FreePort.Next();
            pager.Address = $"127.0.0.1:{port}";
            pager._alertmanager = ExternalProcess.Start("prometheus-alertmanager",
                $"--config.file={configFile}", $"--storage.path={Path.Combine(workDirectory, "am")}",
                $"--web.listen-address={pager.Address}", "--cluster.listen-address=");
            return pager;
        }
        catch
        {
            await pager.DisposeAsync();
            throw;
        }
    }

    /// <summary>The shipped rules with every <c>for:</c> cut to 10 s, written under <paramref name="workDirectory"/>: the end-to-end tests prove the path, the promtool tests the shipped durations.</summary>
    public static async Task<string> WriteRulesWithShortForAsync(string workDirectory)
    {
        var rules = Path.Combine(workDirectory, "muxwatch.rules.yml");
        var shipped = await File.ReadAllTextAsync(Path.Combine(BuiltProgram.RepositoryRoot, "alerts", "muxwatch.rules.yml"));
        await File.WriteAllTextAsync(rules, ForDuration().Replace(shipped, "$1 10s"));
        Assert.Contains("for: 10s", await File.ReadAllTextAsync(rules), StringComparison.Ordinal);
        return rules;
    }

    /// <summary>Every alert of status <paramref name="status"/> sent, each once however many notifications repeated it.</summary>
    public IEnumerable<JsonElement> Alerts(string status) => _notifications
        .SelectMany(n => n.GetProperty("alerts").EnumerateArray())
        .Where(alert => alert.GetProperty("status").GetString() == status)
        .DistinctBy(alert => alert.GetProperty("labels").GetRawText() + alert.GetProperty("startsAt").GetString());

    /// <summary>An alert's name.</summary>
    public static string? Name(JsonElement alert) => alert.GetProperty("labels").GetProperty("alertname").GetString();

    public async ValueTask DisposeAsync()
    {
        if (_alertmanager is not null)
        {
            await _alertmanager.DisposeAsync();
        }

        if (_webhook is not null)
        {
            await _webhook.StopAsync();
            await _webhook.DisposeAsync();
        }
    }

    [GeneratedRegex(@"(?m)^(\s+for:) \d+[smh]$")]
    private static partial Regex ForDuration();
}
