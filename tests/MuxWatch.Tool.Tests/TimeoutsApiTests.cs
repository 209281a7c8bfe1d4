using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using MuxWatch.Testing;
using StackExchange.Redis;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// <c>POST /api/timeouts</c> and <c>GET /api/timeouts</c> on the sidecar hosted in memory: what is read,
/// refused and listed. What needs Kestrel and real sockets (a body that drips in, an upload cut off): <see cref="TimeoutsApiSocketTests"/>.
/// </summary>
public sealed class TimeoutsApiTests : IClassFixture<InMemoryApiFixture>
{
    private readonly InMemoryApiFixture _fixture;

    public TimeoutsApiTests(InMemoryApiFixture fixture)
    {
        _fixture = fixture;
        TestThreadPool.EnsureRoomy();
    }

    private static readonly Uri Timeouts = new("/api/timeouts", UriKind.Relative);
    private HttpClient Client => _fixture.Sidecar.Client;

    [Fact]
    public async Task A_posted_message_is_answered_with_its_diagnosis_and_listed_newest_first()
    {
        var key = $"orders:{Guid.NewGuid():N}";
        var message = $"Timeout performing GET {key} (5000ms), inst: 2, qu: 0, qs: 6, aw: False, rs: ReadAsync, ws: Idle, in: 0, serverEndpoint: 10.0.0.1:6379, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: (Busy=40,Free=32727,Min=8,Max=32767), v: 3.1.31.17473";

        using var response = await Client.PostAsync(Timeouts, new StringContent(message, Encoding.UTF8, "text/plain"));
        var answer = await ReadJsonAsync(response);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var result = answer.GetProperty("results")[0];
        Assert.Equal("thread-pool-starvation", result.GetProperty("cause").GetString());
        Assert.Equal(40, result.GetProperty("fields").GetProperty("WORKER").GetProperty("Busy").GetInt32());

        var listed = await ListAsync();
        var entry = listed.First(t => t.GetProperty("key").GetString() == key);
        Assert.Equal("api", entry.GetProperty("source").GetString());
        Assert.Equal("10.0.0.1:6379", entry.GetProperty("endpoint").GetString());
        Assert.Equal("GET", entry.GetProperty("command").GetString());
    }

    [Fact]
    public async Task Json_lines_keep_their_time_and_a_bad_line_costs_only_itself()
    {
        var key = $"cart:{Guid.NewGuid():N}";
        var body = string.Join('\n',
            JsonSerializer.Serialize(new { message = $"Timeout performing GET {key} (1000ms), qu: 0, qs: 3, in: 0", time = "2026-11-22T10:00:00Z" }),
            "this line is not json",
            JsonSerializer.Serialize(new { message = $"Timeout awaiting response (outbound=0KiB, inbound=4096KiB, 1200ms elapsed, timeout is 1000ms), command=HGETALL, qs: 2, in: 0, serverEndpoint: 10.0.0.2:6379", time = 1_795_000_000 }),
            JsonSerializer.Serialize(new { text = "no message property" }));

        using var response = await Client.PostAsync(new Uri("/api/timeouts?details=true", UriKind.Relative), new StringContent(body, Encoding.UTF8, "application/x-ndjson"));
        var answer = await ReadJsonAsync(response);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(2, answer.GetProperty("accepted").GetInt32());
        Assert.Equal(2, answer.GetProperty("rejected").GetInt32());
        var results = answer.GetProperty("results").EnumerateArray().ToList();
        Assert.Equal("server-stall", results[0].GetProperty("cause").GetString());
        Assert.Equal(DateTimeOffset.Parse("2026-11-22T10:00:00Z", System.Globalization.CultureInfo.InvariantCulture), results[0].GetProperty("time").GetDateTimeOffset());
        Assert.Equal(2, results[1].GetProperty("line").GetInt32());
        Assert.Equal("large-payload", results[2].GetProperty("cause").GetString());
        Assert.Equal(DateTimeOffset.FromUnixTimeSeconds(1_795_000_000), results[2].GetProperty("time").GetDateTimeOffset());
        Assert.Contains("message", results[3].GetProperty("error").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_password_posted_with_a_message_appears_in_no_answer_list_or_log()
    {
        const string secret = "hunter2-do-not-show";
        var message = $"connect cache:6380,password={secret},user=app-{secret} then: Timeout performing GET k (5000ms), qs: 2, in: 0, serverEndpoint: rediss://app:{secret}@cache:6380";

        using var posted = await Client.PostAsync(Timeouts, new StringContent(message, Encoding.UTF8, "text/plain"));
        var answer = await posted.Content.ReadAsStringAsync();
        using var listed = await Client.GetAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative));
        var list = await listed.Content.ReadAsStringAsync();

        Assert.Equal(HttpStatusCode.OK, posted.StatusCode);
        Assert.DoesNotContain(secret, answer, StringComparison.Ordinal);
        Assert.DoesNotContain(secret, list, StringComparison.Ordinal);
        Assert.DoesNotContain(secret, _fixture.Sidecar.LogText, StringComparison.Ordinal);
    }

    public static TheoryData<string, byte[], string, HttpStatusCode> BadBodies() => new()
    {
        { "empty", [], "text/plain", HttpStatusCode.BadRequest },
        { "whitespace", "  \n\t "u8.ToArray(), "text/plain", HttpStatusCode.BadRequest },
        { "oversized", Encoding.UTF8.GetBytes("Timeout performing GET k (1ms), qs: 1, pad: " + new string('x', InMemoryApiFixture.MaxBodyBytes)), "text/plain", HttpStatusCode.RequestEntityTooLarge },
        { "binary", [0x00, 0x01, 0x02, 0xFF, 0x00, 0x10], "application/octet-stream", HttpStatusCode.UnsupportedMediaType },
        { "invalid UTF-8", [0x54, 0x69, 0x6D, 0xC3, 0x28, 0xA0, 0xA1], "text/plain", HttpStatusCode.UnsupportedMediaType },
        { "text that is no Redis message", "hello, world"u8.ToArray(), "text/plain", HttpStatusCode.UnprocessableEntity },
        { "one field and no header (issue 26, #12)", "{\"message\":\"qs: 1\"}"u8.ToArray(), "application/json", HttpStatusCode.BadRequest }, // as every JSON line that is no message
        { "two fields and no header", "qs: 1, in: 0"u8.ToArray(), "text/plain", HttpStatusCode.UnprocessableEntity },
        { "too many lines", Encoding.UTF8.GetBytes(string.Concat(Enumerable.Repeat("{\"message\":\"qs: 1\"}\n", InMemoryApiFixture.MaxMessagesPerRequest + 1))), "application/x-ndjson", HttpStatusCode.RequestEntityTooLarge },
        { "deeply nested JSON", Encoding.UTF8.GetBytes(new string('[', 10_000) + new string(']', 10_000)), "application/json", HttpStatusCode.BadRequest },
        { "JSON lines none of them valid", "{\"message\": 5}\n{\"nope\": true}\n"u8.ToArray(), "application/x-ndjson", HttpStatusCode.BadRequest },
    };

    [Theory]
    [MemberData(nameof(BadBodies))]
    public async Task A_bad_body_gets_a_clear_4xx_and_records_nothing(string name, byte[] body, string contentType, HttpStatusCode expected)
    {
        var before = await TotalRecordedAsync();
        using var content = new ByteArrayContent(body);
        content.Headers.ContentType = MediaTypeHeaderValue.Parse(contentType);

        using var response = await Client.PostAsync(Timeouts, content);

        Assert.True(expected == response.StatusCode, $"{name}: expected {expected}, got {response.StatusCode}");
        var answer = await ReadJsonAsync(response);
        Assert.True(answer.TryGetProperty("error", out _) || answer.TryGetProperty("results", out _), $"{name}: no reason given");
        Assert.Equal(before, await TotalRecordedAsync());
        Assert.True((await Client.GetAsync(new Uri("/healthz", UriKind.Relative))).IsSuccessStatusCode);
    }

    [Fact]
    public async Task A_real_timeout_from_a_real_client_is_diagnosed_as_server_stall()
    {
        await using var server = await RedisServer.StartAsync();
        using var redis = await ConnectionMultiplexer.ConnectAsync($"{server.EndPoint},syncTimeout=500");
        var db = redis.GetDatabase();
        var key = $"muxwatch:posted:{server.Port}";
        db.StringSet(key, "v");
        var sleeping = server.CommandInBackground("DEBUG", "SLEEP", "3");
        string? message = null;
        await Eventually.UntilAsync(() =>
        {
            try
            {
                db.StringGet(key);
                return false;
            }
            catch (RedisTimeoutException ex)
            {
                message = ex.ToString(); // type name, message and stack trace, as a log would hold it
                return true;
            }
        }, "a GET to time out while the server sleeps");
        await sleeping;

        using var response = await Client.PostAsync(Timeouts, new StringContent(message!, Encoding.UTF8, "text/plain"));
        var result = (await ReadJsonAsync(response)).GetProperty("results")[0];

        // 2.x messages carry qs > 0: a stall is readable from the text alone. 3.4.35 writes qs: 0 while the
        // reply is outstanding, so a posted 3.x message (no live counters: another process) is read by its
        // version's rules: the stall is still the likeliest reading, held with low confidence.
        var expected = "server-stall";
        Assert.Equal(expected, result.GetProperty("cause").GetString());
        Assert.Equal(message!.Contains("qs: 0,", StringComparison.Ordinal) ? "low" : "medium", result.GetProperty("confidence").GetString());
        Assert.Equal(server.EndPoint, result.GetProperty("endpoint").GetString());
        Assert.Equal("StackExchange.Redis.RedisTimeoutException", result.GetProperty("exceptionType").GetString());
        Assert.Contains(await ListAsync(), t => t.GetProperty("endpoint").GetString() == server.EndPoint && t.GetProperty("cause").GetString() == expected);
    }

    private async Task<List<JsonElement>> ListAsync()
    {
        using var response = await Client.GetAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative));
        return (await ReadJsonAsync(response)).GetProperty("timeouts").EnumerateArray().ToList();
    }

    [Theory]
    [InlineData("0001-01-01T00:00:00Z")]
    [InlineData("9999-12-31T23:59:59Z")]
    [InlineData("1970-01-01T00:00:00Z")]
    public async Task A_time_out_of_range_is_refused_on_its_line_and_the_list_keeps_answering(string time)
    {
        var line = JsonSerializer.Serialize(new { message = "Timeout performing GET k (5000ms), qu: 0, qs: 2, in: 0", time });

        using var response = await Client.PostAsync(Timeouts, new StringContent(line, Encoding.UTF8, "application/x-ndjson"));
        var answer = await ReadJsonAsync(response);
        using var listed = await Client.GetAsync(new Uri("/api/timeouts?limit=1000", UriKind.Relative));

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Contains("between 2000", answer.GetProperty("results")[0].GetProperty("error").GetString(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.OK, listed.StatusCode);
    }

    [Fact]
    public async Task A_json_lines_answer_is_a_summary_no_larger_than_its_body_with_details_on_request()
    {
        var message = "Timeout performing GET k (5000ms), inst: 2, qu: 0, qs: 6, aw: False, rs: ReadAsync, ws: Idle, in: 0, serverEndpoint: 10.0.0.9:6379, IOCP: (Busy=0,Free=1000,Min=8,Max=1000), WORKER: (Busy=40,Free=32727,Min=8,Max=32767), v: 3.4.35";
        var body = "\uFEFF" + string.Concat(Enumerable.Repeat(JsonSerializer.Serialize(new { message }) + "\n", 40));

        using var brief = await Client.PostAsync(Timeouts, new StringContent(body, Encoding.UTF8, "application/x-ndjson"));
        var briefText = await brief.Content.ReadAsStringAsync();
        using var full = await Client.PostAsync(new Uri("/api/timeouts?details=true", UriKind.Relative), new StringContent(body, Encoding.UTF8, "application/x-ndjson"));
        var fullText = await full.Content.ReadAsStringAsync();

        Assert.Equal(HttpStatusCode.OK, brief.StatusCode);
        using var briefAnswer = JsonDocument.Parse(briefText);
        Assert.Equal(40, briefAnswer.RootElement.GetProperty("accepted").GetInt32()); // the byte-order mark did not cost the first line
        var first = briefAnswer.RootElement.GetProperty("results")[0];
        Assert.Equal("thread-pool-starvation", first.GetProperty("cause").GetString());
        Assert.True(first.GetProperty("id").GetInt64() > 0);
        Assert.True(Encoding.UTF8.GetByteCount(briefText) < Encoding.UTF8.GetByteCount(body), $"answer {briefText.Length} for a body of {body.Length}");
        Assert.Contains("\"fields\"", fullText, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("image/png", HttpStatusCode.UnsupportedMediaType)]
    [InlineData("application/x-www-form-urlencoded", HttpStatusCode.UnsupportedMediaType)]
    [InlineData("text/x-log", HttpStatusCode.OK)]
    [InlineData("application/vnd.shipper+json", HttpStatusCode.OK)]
    public async Task Only_text_and_json_types_are_read(string contentType, HttpStatusCode expected)
    {
        var body = contentType.Contains("json", StringComparison.Ordinal)
            ? JsonSerializer.Serialize(new { message = "Timeout performing GET k (5000ms), qu: 0, qs: 2, in: 0" })
            : "Timeout performing GET k (5000ms), qu: 0, qs: 2, in: 0";
        using var content = new StringContent(body, Encoding.UTF8);
        content.Headers.ContentType = MediaTypeHeaderValue.Parse(contentType);

        using var response = await Client.PostAsync(Timeouts, content);

        Assert.Equal(expected, response.StatusCode);
    }

    [Theory]
    [InlineData("GET", "/api/timeouts?limit=abc", HttpStatusCode.BadRequest)]
    [InlineData("GET", "/api/no-such-thing", HttpStatusCode.NotFound)]
    [InlineData("DELETE", "/api/timeouts", HttpStatusCode.MethodNotAllowed)]
    public async Task A_framework_refusal_answers_problem_details_and_is_counted(string method, string path, HttpStatusCode expected)
    {
        var before = await RefusedWithAsync((int)expected);
        using var request = new HttpRequestMessage(new HttpMethod(method), new Uri(path, UriKind.Relative));

        using var response = await Client.SendAsync(request);
        var body = await response.Content.ReadAsStringAsync();

        Assert.Equal(expected, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        using var problem = JsonDocument.Parse(body);
        Assert.Equal((int)expected, problem.RootElement.GetProperty("status").GetInt32());
        Assert.True(await RefusedWithAsync((int)expected) > before);
    }

    [Fact]
    public async Task A_listing_is_one_bounded_page_and_pages_on_with_before()
    {
        for (var i = 0; i < 3; i++)
        {
            using var posted = await Client.PostAsync(Timeouts, new StringContent($"Timeout performing GET page{i} (5000ms), qu: 0, qs: 2, in: 0", Encoding.UTF8, "text/plain"));
        }

        using var firstPage = JsonDocument.Parse(await Client.GetStringAsync(new Uri("/api/timeouts?limit=2", UriKind.Relative)));
        var next = firstPage.RootElement.GetProperty("nextBefore").GetInt64();
        using var secondPage = JsonDocument.Parse(await Client.GetStringAsync(new Uri($"/api/timeouts?limit=2&before={next}", UriKind.Relative)));
        using var huge = JsonDocument.Parse(await Client.GetStringAsync(new Uri("/api/timeouts?limit=1000000", UriKind.Relative)));

        var firstIds = firstPage.RootElement.GetProperty("timeouts").EnumerateArray().Select(t => t.GetProperty("id").GetInt64()).ToList();
        var secondIds = secondPage.RootElement.GetProperty("timeouts").EnumerateArray().Select(t => t.GetProperty("id").GetInt64()).ToList();
        Assert.Equal(2, firstIds.Count);
        Assert.All(secondIds, id => Assert.True(id < firstIds.Min()));
        Assert.True(huge.RootElement.GetProperty("count").GetInt32() <= 1000);
    }

    private async Task<long> RefusedWithAsync(int status)
    {
        using var response = await Client.GetAsync(new Uri("/api/status", UriKind.Relative));
        var answer = await ReadJsonAsync(response);
        return answer.GetProperty("refusedByStatus").TryGetProperty(status.ToString(System.Globalization.CultureInfo.InvariantCulture), out var count) ? count.GetInt64() : 0;
    }

    private async Task<long> TotalRecordedAsync()
    {
        using var response = await Client.GetAsync(new Uri("/api/timeouts?limit=0", UriKind.Relative));
        return (await ReadJsonAsync(response)).GetProperty("totalRecorded").GetInt64();
    }

    private static async Task<JsonElement> ReadJsonAsync(HttpResponseMessage response)
    {
        var text = await response.Content.ReadAsStringAsync();
        using var document = JsonDocument.Parse(text);
        return document.RootElement.Clone();
    }
}
