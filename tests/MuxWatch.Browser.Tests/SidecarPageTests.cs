using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Microsoft.Playwright;
using MuxWatch.Testing;
using static Microsoft.Playwright.Assertions;

namespace MuxWatch.Browser.Tests;

/// <summary>
/// The sidecar's status page at <c>/</c>, in a real browser, against the real service process behind
/// a bearer token, watching a real redis-server that really saves (BGSAVE) and really stalls (DEBUG
/// SLEEP): what an on-call engineer opens first.
/// </summary>
public sealed class SidecarPageTests : IClassFixture<BrowserSession>, IAsyncLifetime
{
    private const string Token = "page-test-token-0123456789";
    private const string Target = "stalling";
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(45);

    private readonly BrowserSession _browser;
    private RedisServer _redis = null!;
    private ServiceProcess _service = null!;

    public SidecarPageTests(BrowserSession browser)
    {
        _browser = browser;
        SetDefaultExpectTimeout((float)Patience.TotalMilliseconds);
    }

    public async Task InitializeAsync()
    {
        _redis = await RedisServer.StartAsync();
        try
        {
            _service = await ServiceProcess.StartAsync(
                $"--MuxWatch:Targets:0:Name={Target}",
                $"--MuxWatch:Targets:0:ConnectionString={_redis.EndPoint},asyncTimeout=500,syncTimeout=500",
                $"--MuxWatch:Api:BearerToken={Token}");
        }
        catch
        {
            await _redis.DisposeAsync(); // xunit does not dispose a class whose initialization failed
            throw;
        }

        _service.Client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", Token);
    }

    public async Task DisposeAsync()
    {
        await _service.DisposeAsync();
        await _redis.DisposeAsync();
    }

    [Fact]
    public async Task A_stall_during_a_bgsave_shows_each_timeout_with_its_cause_on_the_endpoints_timeline_and_its_evidence_when_selected()
    {
        var (page, errors) = await _browser.NewPageAsync();
        await page.GotoAsync($"http://127.0.0.1:{_service.Port}/");

        // The API wants a token: the page asks for it, says so when it is wrong, and then shows the target.
        await Expect(page.Locator("#token-form")).ToBeVisibleAsync();
        await page.FillAsync("#token", "not-the-token");
        await page.ClickAsync("#token-form button[type=submit]");
        await Expect(page.Locator("#token-reason")).ToContainTextAsync("refused");
        await page.FillAsync("#token", Token);
        await page.ClickAsync("#token-form button[type=submit]");
        await Expect(page.Locator("#token-form")).ToBeHiddenAsync();
        await Expect(page.Locator($"#targets tr[data-target='{Target}']")).ToHaveAttributeAsync("data-state", "connected");

        await Eventually.UntilAsync(async () => (await PolledAsync()).GetProperty("lastPollSuccess").ValueKind == JsonValueKind.String, "the first complete poll");

        // A real BGSAVE (about 4 s: 2,000 keys at 2 ms each), then a real stall inside it.
        await _redis.CommandAsync("DEBUG", "POPULATE", "2000");
        await _redis.CommandAsync("CONFIG", "SET", "rdb-key-save-delay", "2000");
        await _redis.CommandAsync("BGSAVE");
        await _redis.CommandAsClientAsync("nightly-export", "DEBUG", "SLEEP", "3"); // sent by a second, named client

        // Every timeout the stall caused, as the API has them once settled.
        List<JsonElement> recorded = [];
        var polling = string.Empty;
        await Eventually.UntilAsync(async () =>
        {
            polling = (await PolledAsync()).ToString();
            using var listed = JsonDocument.Parse(await _service.Client.GetStringAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative)));
            recorded = [.. listed.RootElement.GetProperty("timeouts").EnumerateArray().Select(t => t.Clone())];
            return recorded.Count > 0 && recorded.All(t => t.GetProperty("settled").GetBoolean());
        }, "the stall's timeouts recorded and settled", Patience, () => SeenOf(recorded, polling));
        Assert.All(recorded, t => Assert.Equal(_redis.EndPoint, t.GetProperty("endpoint").GetString()));

        // The table lists each of them with the cause the API gives (a slow command, DEBUG SLEEP, in the slow log), none settling.
        var rows = page.Locator("#timeouts tbody tr[data-timeout-id]");
        await Expect(rows).ToHaveCountAsync(recorded.Count);
        await Expect(page.Locator("#timeouts tbody")).Not.ToContainTextAsync("settling");
        foreach (var timeout in recorded)
        {
            var row = page.Locator($"#timeouts tr[data-timeout-id='{timeout.GetProperty("id").GetInt64()}']");
            var cause = timeout.GetProperty("cause").GetString()!;
            Assert.Equal("slow-command", cause);
            await Expect(row.Locator("td.cause")).ToContainTextAsync(cause);
            await Expect(row.Locator("td.cause")).ToContainTextAsync(timeout.GetProperty("confidence").GetString()!);
        }

        // The endpoint's timeline: the BGSAVE's interval, its fork, the slow command, and every timeout drawn on it.
        var timeline = page.Locator($"#timelines .timeline[data-endpoint='{_redis.EndPoint}']");
        await Expect(timeline.Locator("[data-kind='bgsave']")).Not.ToHaveCountAsync(0);
        await Expect(timeline.Locator("[data-kind='fork']")).Not.ToHaveCountAsync(0);
        await Expect(timeline.Locator("[data-kind='slow-command']")).Not.ToHaveCountAsync(0);
        await Expect(timeline.Locator("g.timeout[data-cause='slow-command']")).ToHaveCountAsync(recorded.Count);
        await page.ClickAsync("#span button[data-minutes='5']"); // zoomed in to the last 5 minutes: all still drawn
        await Expect(timeline.Locator("[data-kind='bgsave']")).Not.ToHaveCountAsync(0);
        await Expect(timeline.Locator("g.timeout[data-cause='slow-command']")).ToHaveCountAsync(recorded.Count);
        await Expect(page.Locator("#summary [data-cause='slow-command']")).ToContainTextAsync(recorded.Count.ToString(System.Globalization.CultureInfo.InvariantCulture));

        // Selecting one (the newest) shows its whole diagnosis and the server's events in its waiting window.
        var selected = recorded[0];
        await page.ClickAsync($"#timeouts tr[data-timeout-id='{selected.GetProperty("id").GetInt64()}'] td.cause");
        var details = page.Locator("#details");
        await Expect(details).ToBeVisibleAsync();
        await Expect(details.Locator("h2")).ToContainTextAsync($"Timeout #{selected.GetProperty("id").GetInt64()}");
        await Expect(details.Locator("h2")).ToContainTextAsync("slow-command");
        var evidence = selected.GetProperty("evidence").EnumerateArray().Select(e => e.GetString()!).ToList();
        await Expect(details.Locator("ul.evidence li")).ToHaveCountAsync(evidence.Count);
        foreach (var line in evidence)
        {
            await Expect(details.Locator("ul.evidence")).ToContainTextAsync(line);
        }

        await Expect(details.Locator("table.events tr[data-kind='slow-command']")).Not.ToHaveCountAsync(0);
        await Expect(details.Locator(".timeline.zoomed [data-kind='slow-command']")).Not.ToHaveCountAsync(0); // the wait drawn zoomed in, the slow command inside it
        await Expect(details.Locator("table.events")).ToContainTextAsync("DEBUG SLEEP, sent by 127.0.0.1:");
        await Expect(details.Locator("table.events")).ToContainTextAsync("(nightly-export)");

        // The slowest commands of the hour: the sleep, with the client that sent it.
        var sleep = page.Locator("#slow-commands tbody tr[data-command='DEBUG']");
        await Expect(sleep).ToHaveCountAsync(1);
        await Expect(sleep).ToContainTextAsync("DEBUG SLEEP");
        await Expect(sleep).ToContainTextAsync("(nightly-export)");
        await Expect(sleep).ToContainTextAsync(_redis.EndPoint);
        await Expect(details.Locator("pre.json")).ToContainTextAsync($"\"id\": {selected.GetProperty("id").GetInt64()}");

        // The same timeline drawn in the page selects too: its marker is the selected one.
        await Expect(timeline.Locator($"g.timeout.selected[data-timeout-id='{selected.GetProperty("id").GetInt64()}']")).ToHaveCountAsync(1);

        // The incident: the page's first section, one for the whole stall, its culprit named.
        var incident = page.Locator($"#incidents li.incident[data-endpoint='{_redis.EndPoint}']");
        await Expect(incident).ToHaveCountAsync(1);
        await Expect(incident).ToContainTextAsync($"{recorded.Count} timeout");
        await Expect(incident.Locator(".culprits")).ToContainTextAsync("(nightly-export)");

        await page.ScreenshotAsync(new PageScreenshotOptions { Path = BrowserSession.ScreenshotPath("status-page.png"), FullPage = true });
        Assert.True(errors.All(e => e.Contains("401", StringComparison.Ordinal)), string.Join('\n', errors)); // the refused token's 401 is the only error the browser logs

        // The link the timeout-spike alert carries (page_url): the page opens on this endpoint's incident, its first
        // timeout's details open, even after 60 other endpoints' newer incidents (the page used to ask for the 50
        // newest of all and filter them itself: "no incident is kept").
        for (var i = 0; i < 60; i++)
        {
            using var posted = await _service.Client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent(
                $"Timeout performing GET other (5000ms), inst: 0, qu: 0, qs: 1, in: 0, serverEndpoint: 10.7.0.{i}:6379, IOCP: (Busy=0,Free=1000,Min=2,Max=1000), WORKER: (Busy=1,Free=32766,Min=2,Max=32767)",
                System.Text.Encoding.UTF8, "text/plain"));
            posted.EnsureSuccessStatusCode();
        }

        await Eventually.UntilAsync(async () =>
        {
            using var newest = JsonDocument.Parse(await _service.Client.GetStringAsync(new Uri("/api/incidents?limit=50", UriKind.Relative)));
            return newest.RootElement.GetProperty("incidents").EnumerateArray().All(i => i.GetProperty("endpoint").GetString() != _redis.EndPoint);
        }, "the stall's incident no longer among the 50 newest");
        var (linked, linkedErrors) = await _browser.NewPageAsync();
        await linked.GotoAsync($"http://127.0.0.1:{_service.Port}/?endpoint={Uri.EscapeDataString(_redis.EndPoint)}");
        await linked.FillAsync("#token", Token);
        await linked.ClickAsync("#token-form button[type=submit]");
        await Expect(linked.Locator($"#incidents li.incident.selected[data-endpoint='{_redis.EndPoint}']")).ToHaveCountAsync(1);
        await Expect(linked.Locator("#incidents-filter")).ToContainTextAsync(_redis.EndPoint);
        await Expect(linked.Locator("#details")).ToBeVisibleAsync();
        var first = recorded.Min(t => t.GetProperty("id").GetInt64());
        await Expect(linked.Locator("#details h2")).ToContainTextAsync($"Timeout #{first}");
        Assert.True(linkedErrors.All(e => e.Contains("401", StringComparison.Ordinal)), string.Join('\n', linkedErrors)); // only the API's answers before the token
    }

    [Fact]
    public async Task A_posted_message_full_of_markup_is_shown_as_text_and_runs_nothing()
    {
        const string hostile = "Timeout performing GET <img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script> (5000ms), inst: 0, qu: 0, qs: 3, in: 0, serverEndpoint: 10.9.9.9:6379, IOCP: (Busy=0,Free=1000,Min=2,Max=1000), WORKER: (Busy=1,Free=32766,Min=2,Max=32767)";
        using var posted = await _service.Client.PostAsync(new Uri("/api/timeouts", UriKind.Relative), new StringContent(hostile, Encoding.UTF8, "text/plain"));
        Assert.True(posted.IsSuccessStatusCode, await posted.Content.ReadAsStringAsync());
        using var answer = JsonDocument.Parse(await posted.Content.ReadAsStringAsync());
        var id = answer.RootElement.GetProperty("results")[0].GetProperty("id").GetInt64();

        var (page, errors) = await _browser.NewPageAsync();
        await page.GotoAsync($"http://127.0.0.1:{_service.Port}/");
        await page.FillAsync("#token", Token);
        await page.ClickAsync("#token-form button[type=submit]");
        await page.ClickAsync($"#timeouts tr[data-timeout-id='{id}'] td.cause");
        await Expect(page.Locator("#details pre.json")).ToContainTextAsync("<img src=x onerror=");
        await Expect(page.Locator("#details pre.json")).ToContainTextAsync("<script>window.pwned=2</script>");
        Assert.Equal(0, await page.Locator("#details img, #details script, #timeouts img, #timeouts script").CountAsync());
        Assert.True(await page.EvaluateAsync<bool>("() => window.pwned === undefined"));
        Assert.True(errors.All(e => e.Contains("401", StringComparison.Ordinal)), string.Join('\n', errors)); // no script error, no refused inline script
    }

    [Fact]
    public async Task A_client_name_and_an_argument_full_of_markup_in_the_slow_log_are_shown_as_text_and_run_nothing()
    {
        // A client name can hold anything but spaces, and a key anything at all: both reach the page from the slow log.
        const string name = "<img/src=x/onerror=window.pwned=1>";
        await _redis.CommandAsync("CONFIG", "SET", "slowlog-log-slower-than", "0"); // every command logged
        try
        {
            await _redis.CommandAsClientAsync(name, "GET", "<script>window.pwned=2</script>");
        }
        finally
        {
            await _redis.CommandAsync("CONFIG", "SET", "slowlog-log-slower-than", "10000");
        }

        await Eventually.UntilAsync(async () =>
        {
            using var events = JsonDocument.Parse(await _service.Client.GetStringAsync(new Uri($"/api/events?endpoint={_redis.EndPoint}", UriKind.Relative)));
            return events.RootElement.GetProperty("endpoints")[0].GetProperty("slowCommands").EnumerateArray().Any(g => g.GetProperty("clientName").GetString() == name);
        }, "the GET in the slow log, with its client's name", Patience);

        var (page, errors) = await _browser.NewPageAsync();
        await page.GotoAsync($"http://127.0.0.1:{_service.Port}/");
        await page.FillAsync("#token", Token);
        await page.ClickAsync("#token-form button[type=submit]");
        // The test's GET, among any other GET the server logged meanwhile (a client's tie-breaker read on connect).
        var row = page.Locator("#slow-commands tbody tr[data-command='GET']", new() { HasText = "window.pwned=2" });
        await Expect(row).ToContainTextAsync("GET <script>window.pwned=2</script>");
        await Expect(row).ToContainTextAsync($"({name})");
        Assert.Equal(0, await page.Locator("#slow-commands img, #slow-commands script, #timelines img, #timelines script").CountAsync());
        Assert.True(await page.EvaluateAsync<bool>("() => window.pwned === undefined"));
        Assert.True(errors.All(e => e.Contains("401", StringComparison.Ordinal)), string.Join('\n', errors));
    }

    /// <summary>What the wait for the stall's timeouts last saw, for whoever reads its failure: the timeouts, the polling, the service's last lines.</summary>
    private string SeenOf(List<JsonElement> recorded, string polling)
    {
        var timeouts = string.Join(", ", recorded.Select(t => $"#{t.GetProperty("id").GetInt64()} {t.GetProperty("cause").GetString()} settled={t.GetProperty("settled").GetBoolean()}"));
        var lines = _service.Output.Split('\n');
        return $"{recorded.Count} timeout(s) [{timeouts}]; polling {polling}; the service's last lines: {string.Join(" | ", lines.TakeLast(25))}";
    }

    private async Task<JsonElement> PolledAsync()
    {
        using var events = JsonDocument.Parse(await _service.Client.GetStringAsync(new Uri($"/api/events?endpoint={_redis.EndPoint}", UriKind.Relative)));
        return events.RootElement.GetProperty("endpoints")[0].GetProperty("polling").Clone();
    }
}
