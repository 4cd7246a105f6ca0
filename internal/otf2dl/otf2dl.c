//go:build cgo && !nootf2

/*
 * otf2dl.c: the OTF2 library, dlopen()ed on first use (as interpose/csrc/
 * papi.c does for libpapi), and the mf_OTF2_* wrappers of otf2dl.h that
 * call it through function pointers (cgo cannot call a C function pointer).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "otf2dl.h"

/* The functions looked up, each once. */
#define MF_OTF2_FUNCS(X) \
	X(OTF2_Archive_Close) \
	X(OTF2_Archive_CloseDefFiles) \
	X(OTF2_Archive_CloseDefWriter) \
	X(OTF2_Archive_CloseEvtFiles) \
	X(OTF2_Archive_CloseEvtWriter) \
	X(OTF2_Archive_GetDefWriter) \
	X(OTF2_Archive_GetEvtWriter) \
	X(OTF2_Archive_GetGlobalDefWriter) \
	X(OTF2_Archive_Open) \
	X(OTF2_Archive_OpenDefFiles) \
	X(OTF2_Archive_OpenEvtFiles) \
	X(OTF2_Archive_SetCreator) \
	X(OTF2_Archive_SetFlushCallbacks) \
	X(OTF2_Archive_SetSerialCollectiveCallbacks) \
	X(OTF2_Error_GetDescription) \
	X(OTF2_Error_GetName) \
	X(OTF2_EvtReader_GetPos) \
	X(OTF2_EvtWriter_Enter) \
	X(OTF2_EvtWriter_Leave) \
	X(OTF2_EvtWriter_MpiCollectiveBegin) \
	X(OTF2_EvtWriter_MpiCollectiveEnd) \
	X(OTF2_EvtWriter_MpiRecv) \
	X(OTF2_EvtWriter_MpiSend) \
	X(OTF2_GlobalDefReaderCallbacks_Delete) \
	X(OTF2_GlobalDefReaderCallbacks_New) \
	X(OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback) \
	X(OTF2_GlobalDefReaderCallbacks_SetLocationCallback) \
	X(OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback) \
	X(OTF2_GlobalDefReaderCallbacks_SetRegionCallback) \
	X(OTF2_GlobalDefReaderCallbacks_SetStringCallback) \
	X(OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback) \
	X(OTF2_GlobalDefWriter_WriteClockProperties) \
	X(OTF2_GlobalDefWriter_WriteComm) \
	X(OTF2_GlobalDefWriter_WriteGroup) \
	X(OTF2_GlobalDefWriter_WriteLocation) \
	X(OTF2_GlobalDefWriter_WriteLocationGroup) \
	X(OTF2_GlobalDefWriter_WriteRegion) \
	X(OTF2_GlobalDefWriter_WriteString) \
	X(OTF2_GlobalDefWriter_WriteSystemTreeNode) \
	X(OTF2_GlobalEvtReaderCallbacks_Delete) \
	X(OTF2_GlobalEvtReaderCallbacks_New) \
	X(OTF2_GlobalEvtReaderCallbacks_SetEnterCallback) \
	X(OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback) \
	X(OTF2_Reader_Close) \
	X(OTF2_Reader_CloseDefFiles) \
	X(OTF2_Reader_CloseDefReader) \
	X(OTF2_Reader_CloseGlobalDefReader) \
	X(OTF2_Reader_CloseGlobalEvtReader) \
	X(OTF2_Reader_GetDefReader) \
	X(OTF2_Reader_GetEvtReader) \
	X(OTF2_Reader_GetGlobalDefReader) \
	X(OTF2_Reader_GetGlobalEvtReader) \
	X(OTF2_Reader_Open) \
	X(OTF2_Reader_OpenDefFiles) \
	X(OTF2_Reader_OpenEvtFiles) \
	X(OTF2_Reader_ReadAllGlobalDefinitions) \
	X(OTF2_Reader_ReadAllLocalDefinitions) \
	X(OTF2_Reader_ReadAllLocalEvents) \
	X(OTF2_Reader_ReadGlobalEvents) \
	X(OTF2_Reader_RegisterGlobalDefCallbacks) \
	X(OTF2_Reader_RegisterGlobalEvtCallbacks) \
	X(OTF2_Reader_SelectLocation) \
	X(OTF2_Reader_SetSerialCollectiveCallbacks)

/* api holds a pointer per function, typed from otf2/otf2.h so that the
 * compiler checks every wrapper's call against the real declaration. */
#define MF_OTF2_POINTER(f) __typeof__(&f) f;
struct mf_otf2_api {
	MF_OTF2_FUNCS(MF_OTF2_POINTER)
};
#undef MF_OTF2_POINTER

static struct mf_otf2_api api;
static int loaded;

int mf_otf2_load(const char *path, char *err, size_t n)
{
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(err, n, "%s", e ? e : "dlopen failed");
		return -1;
	}
	struct mf_otf2_api a;
	memset(&a, 0, sizeof a);
#define MF_OTF2_LOOKUP(f) \
	if (!(a.f = (__typeof__(&f))dlsym(h, #f))) { \
		const char *e = dlerror(); \
		if (e) \
			snprintf(err, n, "%s", e); \
		else \
			snprintf(err, n, "%s: no function %s", path, #f); \
		dlclose(h); \
		return -1; \
	}
	MF_OTF2_FUNCS(MF_OTF2_LOOKUP)
#undef MF_OTF2_LOOKUP
	if (loaded) {
		/* Already loaded: keep the functions in use (a caller may be in
		 * one); the reference this dlopen took is dropped. */
		dlclose(h);
		return 0;
	}
	api = a;
	loaded = 1;
	return 0;
}

int mf_otf2_loaded(void) { return loaded; }

/* The wrappers: the parameters of otf2/otf2.h, and a call through api. */

OTF2_ErrorCode mf_OTF2_Archive_Close(OTF2_Archive *archive)
{
	return api.OTF2_Archive_Close(archive);
}

OTF2_ErrorCode mf_OTF2_Archive_CloseDefFiles(OTF2_Archive *archive)
{
	return api.OTF2_Archive_CloseDefFiles(archive);
}

OTF2_ErrorCode mf_OTF2_Archive_CloseDefWriter(OTF2_Archive *archive, OTF2_DefWriter *writer)
{
	return api.OTF2_Archive_CloseDefWriter(archive, writer);
}

OTF2_ErrorCode mf_OTF2_Archive_CloseEvtFiles(OTF2_Archive *archive)
{
	return api.OTF2_Archive_CloseEvtFiles(archive);
}

OTF2_ErrorCode mf_OTF2_Archive_CloseEvtWriter(OTF2_Archive *archive, OTF2_EvtWriter *writer)
{
	return api.OTF2_Archive_CloseEvtWriter(archive, writer);
}

OTF2_DefWriter *mf_OTF2_Archive_GetDefWriter(OTF2_Archive *archive, OTF2_LocationRef location)
{
	return api.OTF2_Archive_GetDefWriter(archive, location);
}

OTF2_EvtWriter *mf_OTF2_Archive_GetEvtWriter(OTF2_Archive *archive, OTF2_LocationRef location)
{
	return api.OTF2_Archive_GetEvtWriter(archive, location);
}

OTF2_GlobalDefWriter *mf_OTF2_Archive_GetGlobalDefWriter(OTF2_Archive *archive)
{
	return api.OTF2_Archive_GetGlobalDefWriter(archive);
}

OTF2_Archive *mf_OTF2_Archive_Open(const char *archivePath, const char *archiveName, const OTF2_FileMode fileMode,
		const uint64_t chunkSizeEvents, const uint64_t chunkSizeDefs, const OTF2_FileSubstrate fileSubstrate,
		const OTF2_Compression compression)
{
	return api.OTF2_Archive_Open(archivePath, archiveName, fileMode, chunkSizeEvents, chunkSizeDefs, fileSubstrate, compression);
}

OTF2_ErrorCode mf_OTF2_Archive_OpenDefFiles(OTF2_Archive *archive)
{
	return api.OTF2_Archive_OpenDefFiles(archive);
}

OTF2_ErrorCode mf_OTF2_Archive_OpenEvtFiles(OTF2_Archive *archive)
{
	return api.OTF2_Archive_OpenEvtFiles(archive);
}

OTF2_ErrorCode mf_OTF2_Archive_SetCreator(OTF2_Archive *archive, const char *creator)
{
	return api.OTF2_Archive_SetCreator(archive, creator);
}

OTF2_ErrorCode mf_OTF2_Archive_SetFlushCallbacks(OTF2_Archive *archive, const OTF2_FlushCallbacks *flushCallbacks,
		void *flushData)
{
	return api.OTF2_Archive_SetFlushCallbacks(archive, flushCallbacks, flushData);
}

OTF2_ErrorCode mf_OTF2_Archive_SetSerialCollectiveCallbacks(OTF2_Archive *archive)
{
	return api.OTF2_Archive_SetSerialCollectiveCallbacks(archive);
}

const char *mf_OTF2_Error_GetDescription(OTF2_ErrorCode errorCode)
{
	return api.OTF2_Error_GetDescription(errorCode);
}

const char *mf_OTF2_Error_GetName(OTF2_ErrorCode errorCode)
{
	return api.OTF2_Error_GetName(errorCode);
}

OTF2_ErrorCode mf_OTF2_EvtReader_GetPos(OTF2_EvtReader *reader, uint64_t *position)
{
	return api.OTF2_EvtReader_GetPos(reader, position);
}

OTF2_ErrorCode mf_OTF2_EvtWriter_Enter(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList, OTF2_TimeStamp time,
		OTF2_RegionRef region)
{
	return api.OTF2_EvtWriter_Enter(writer, attributeList, time, region);
}

OTF2_ErrorCode mf_OTF2_EvtWriter_Leave(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList, OTF2_TimeStamp time,
		OTF2_RegionRef region)
{
	return api.OTF2_EvtWriter_Leave(writer, attributeList, time, region);
}

OTF2_ErrorCode mf_OTF2_EvtWriter_MpiCollectiveBegin(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList,
		OTF2_TimeStamp time)
{
	return api.OTF2_EvtWriter_MpiCollectiveBegin(writer, attributeList, time);
}

OTF2_ErrorCode mf_OTF2_EvtWriter_MpiCollectiveEnd(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList,
		OTF2_TimeStamp time, OTF2_CollectiveOp collectiveOp, OTF2_CommRef communicator, uint32_t root, uint64_t sizeSent,
		uint64_t sizeReceived)
{
	return api.OTF2_EvtWriter_MpiCollectiveEnd(writer, attributeList, time, collectiveOp, communicator, root, sizeSent, sizeReceived);
}

OTF2_ErrorCode mf_OTF2_EvtWriter_MpiRecv(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList,
		OTF2_TimeStamp time, uint32_t sender, OTF2_CommRef communicator, uint32_t msgTag, uint64_t msgLength)
{
	return api.OTF2_EvtWriter_MpiRecv(writer, attributeList, time, sender, communicator, msgTag, msgLength);
}

OTF2_ErrorCode mf_OTF2_EvtWriter_MpiSend(OTF2_EvtWriter *writer, OTF2_AttributeList *attributeList,
		OTF2_TimeStamp time, uint32_t receiver, OTF2_CommRef communicator, uint32_t msgTag, uint64_t msgLength)
{
	return api.OTF2_EvtWriter_MpiSend(writer, attributeList, time, receiver, communicator, msgTag, msgLength);
}

void mf_OTF2_GlobalDefReaderCallbacks_Delete(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks)
{
	api.OTF2_GlobalDefReaderCallbacks_Delete(globalDefReaderCallbacks);
}

OTF2_GlobalDefReaderCallbacks *mf_OTF2_GlobalDefReaderCallbacks_New(void)
{
	return api.OTF2_GlobalDefReaderCallbacks_New();
}

OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_ClockProperties clockPropertiesCallback)
{
	return api.OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(globalDefReaderCallbacks, clockPropertiesCallback);
}

OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetLocationCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_Location locationCallback)
{
	return api.OTF2_GlobalDefReaderCallbacks_SetLocationCallback(globalDefReaderCallbacks, locationCallback);
}

OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_LocationGroup locationGroupCallback)
{
	return api.OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(globalDefReaderCallbacks, locationGroupCallback);
}

OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetRegionCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_Region regionCallback)
{
	return api.OTF2_GlobalDefReaderCallbacks_SetRegionCallback(globalDefReaderCallbacks, regionCallback);
}

OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetStringCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_String stringCallback)
{
	return api.OTF2_GlobalDefReaderCallbacks_SetStringCallback(globalDefReaderCallbacks, stringCallback);
}

OTF2_ErrorCode mf_OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(OTF2_GlobalDefReaderCallbacks *globalDefReaderCallbacks,
		OTF2_GlobalDefReaderCallback_SystemTreeNode systemTreeNodeCallback)
{
	return api.OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(globalDefReaderCallbacks, systemTreeNodeCallback);
}

OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteClockProperties(OTF2_GlobalDefWriter *writerHandle,
		uint64_t timerResolution, uint64_t globalOffset, uint64_t traceLength, uint64_t realtimeTimestamp)
{
	return api.OTF2_GlobalDefWriter_WriteClockProperties(writerHandle, timerResolution, globalOffset, traceLength, realtimeTimestamp);
}

OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteComm(OTF2_GlobalDefWriter *writerHandle, OTF2_CommRef self,
		OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef parent, OTF2_CommFlag flags)
{
	return api.OTF2_GlobalDefWriter_WriteComm(writerHandle, self, name, group, parent, flags);
}

OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteGroup(OTF2_GlobalDefWriter *writerHandle, OTF2_GroupRef self,
		OTF2_StringRef name, OTF2_GroupType groupType, OTF2_Paradigm paradigm, OTF2_GroupFlag groupFlags,
		uint32_t numberOfMembers, const uint64_t *members)
{
	return api.OTF2_GlobalDefWriter_WriteGroup(writerHandle, self, name, groupType, paradigm, groupFlags, numberOfMembers, members);
}

OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteLocation(OTF2_GlobalDefWriter *writerHandle, OTF2_LocationRef self,
		OTF2_StringRef name, OTF2_LocationType locationType, uint64_t numberOfEvents, OTF2_LocationGroupRef locationGroup)
{
	return api.OTF2_GlobalDefWriter_WriteLocation(writerHandle, self, name, locationType, numberOfEvents, locationGroup);
}

OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteLocationGroup(OTF2_GlobalDefWriter *writerHandle,
		OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType locationGroupType,
		OTF2_SystemTreeNodeRef systemTreeParent, OTF2_LocationGroupRef creatingLocationGroup)
{
	return api.OTF2_GlobalDefWriter_WriteLocationGroup(writerHandle, self, name, locationGroupType, systemTreeParent, creatingLocationGroup);
}

OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteRegion(OTF2_GlobalDefWriter *writerHandle, OTF2_RegionRef self,
		OTF2_StringRef name, OTF2_StringRef canonicalName, OTF2_StringRef description, OTF2_RegionRole regionRole,
		OTF2_Paradigm paradigm, OTF2_RegionFlag regionFlags, OTF2_StringRef sourceFile, uint32_t beginLineNumber,
		uint32_t endLineNumber)
{
	return api.OTF2_GlobalDefWriter_WriteRegion(writerHandle, self, name, canonicalName, description, regionRole, paradigm, regionFlags, sourceFile, beginLineNumber, endLineNumber);
}

OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteString(OTF2_GlobalDefWriter *writerHandle, OTF2_StringRef self,
		const char *string)
{
	return api.OTF2_GlobalDefWriter_WriteString(writerHandle, self, string);
}

OTF2_ErrorCode mf_OTF2_GlobalDefWriter_WriteSystemTreeNode(OTF2_GlobalDefWriter *writerHandle,
		OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef className, OTF2_SystemTreeNodeRef parent)
{
	return api.OTF2_GlobalDefWriter_WriteSystemTreeNode(writerHandle, self, name, className, parent);
}

void mf_OTF2_GlobalEvtReaderCallbacks_Delete(OTF2_GlobalEvtReaderCallbacks *globalEvtReaderCallbacks)
{
	api.OTF2_GlobalEvtReaderCallbacks_Delete(globalEvtReaderCallbacks);
}

OTF2_GlobalEvtReaderCallbacks *mf_OTF2_GlobalEvtReaderCallbacks_New(void)
{
	return api.OTF2_GlobalEvtReaderCallbacks_New();
}

OTF2_ErrorCode mf_OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(OTF2_GlobalEvtReaderCallbacks *globalEvtReaderCallbacks,
		OTF2_GlobalEvtReaderCallback_Enter enterCallback)
{
	return api.OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(globalEvtReaderCallbacks, enterCallback);
}

OTF2_ErrorCode mf_OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(OTF2_GlobalEvtReaderCallbacks *globalEvtReaderCallbacks,
		OTF2_GlobalEvtReaderCallback_Leave leaveCallback)
{
	return api.OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(globalEvtReaderCallbacks, leaveCallback);
}

OTF2_ErrorCode mf_OTF2_Reader_Close(OTF2_Reader *reader)
{
	return api.OTF2_Reader_Close(reader);
}

OTF2_ErrorCode mf_OTF2_Reader_CloseDefFiles(OTF2_Reader *reader)
{
	return api.OTF2_Reader_CloseDefFiles(reader);
}

OTF2_ErrorCode mf_OTF2_Reader_CloseDefReader(OTF2_Reader *reader, OTF2_DefReader *defReader)
{
	return api.OTF2_Reader_CloseDefReader(reader, defReader);
}

OTF2_ErrorCode mf_OTF2_Reader_CloseGlobalDefReader(OTF2_Reader *reader, OTF2_GlobalDefReader *globalDefReader)
{
	return api.OTF2_Reader_CloseGlobalDefReader(reader, globalDefReader);
}

OTF2_ErrorCode mf_OTF2_Reader_CloseGlobalEvtReader(OTF2_Reader *reader, OTF2_GlobalEvtReader *globalEvtReader)
{
	return api.OTF2_Reader_CloseGlobalEvtReader(reader, globalEvtReader);
}

OTF2_DefReader *mf_OTF2_Reader_GetDefReader(OTF2_Reader *reader, OTF2_LocationRef location)
{
	return api.OTF2_Reader_GetDefReader(reader, location);
}

OTF2_EvtReader *mf_OTF2_Reader_GetEvtReader(OTF2_Reader *reader, OTF2_LocationRef location)
{
	return api.OTF2_Reader_GetEvtReader(reader, location);
}

OTF2_GlobalDefReader *mf_OTF2_Reader_GetGlobalDefReader(OTF2_Reader *reader)
{
	return api.OTF2_Reader_GetGlobalDefReader(reader);
}

OTF2_GlobalEvtReader *mf_OTF2_Reader_GetGlobalEvtReader(OTF2_Reader *reader)
{
	return api.OTF2_Reader_GetGlobalEvtReader(reader);
}

OTF2_Reader *mf_OTF2_Reader_Open(const char *anchorFilePath)
{
	return api.OTF2_Reader_Open(anchorFilePath);
}

OTF2_ErrorCode mf_OTF2_Reader_OpenDefFiles(OTF2_Reader *reader)
{
	return api.OTF2_Reader_OpenDefFiles(reader);
}

OTF2_ErrorCode mf_OTF2_Reader_OpenEvtFiles(OTF2_Reader *reader)
{
	return api.OTF2_Reader_OpenEvtFiles(reader);
}

OTF2_ErrorCode mf_OTF2_Reader_ReadAllGlobalDefinitions(OTF2_Reader *reader, OTF2_GlobalDefReader *defReader,
		uint64_t *definitionsRead)
{
	return api.OTF2_Reader_ReadAllGlobalDefinitions(reader, defReader, definitionsRead);
}

OTF2_ErrorCode mf_OTF2_Reader_ReadAllLocalDefinitions(OTF2_Reader *reader, OTF2_DefReader *defReader,
		uint64_t *definitionsRead)
{
	return api.OTF2_Reader_ReadAllLocalDefinitions(reader, defReader, definitionsRead);
}

OTF2_ErrorCode mf_OTF2_Reader_ReadAllLocalEvents(OTF2_Reader *reader, OTF2_EvtReader *evtReader, uint64_t *eventsRead)
{
	return api.OTF2_Reader_ReadAllLocalEvents(reader, evtReader, eventsRead);
}

OTF2_ErrorCode mf_OTF2_Reader_ReadGlobalEvents(OTF2_Reader *reader, OTF2_GlobalEvtReader *evtReader,
		uint64_t eventsToRead, uint64_t *eventsRead)
{
	return api.OTF2_Reader_ReadGlobalEvents(reader, evtReader, eventsToRead, eventsRead);
}

OTF2_ErrorCode mf_OTF2_Reader_RegisterGlobalDefCallbacks(OTF2_Reader *reader, OTF2_GlobalDefReader *defReader,
		const OTF2_GlobalDefReaderCallbacks *callbacks, void *userData)
{
	return api.OTF2_Reader_RegisterGlobalDefCallbacks(reader, defReader, callbacks, userData);
}

OTF2_ErrorCode mf_OTF2_Reader_RegisterGlobalEvtCallbacks(OTF2_Reader *reader, OTF2_GlobalEvtReader *evtReader,
		const OTF2_GlobalEvtReaderCallbacks *callbacks, void *userData)
{
	return api.OTF2_Reader_RegisterGlobalEvtCallbacks(reader, evtReader, callbacks, userData);
}

OTF2_ErrorCode mf_OTF2_Reader_SelectLocation(OTF2_Reader *reader, OTF2_LocationRef location)
{
	return api.OTF2_Reader_SelectLocation(reader, location);
}

OTF2_ErrorCode mf_OTF2_Reader_SetSerialCollectiveCallbacks(OTF2_Reader *reader)
{
	return api.OTF2_Reader_SetSerialCollectiveCallbacks(reader);
}
